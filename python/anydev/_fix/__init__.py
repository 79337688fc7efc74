"""The fixer's parts (anydev.fix is the entry point): one module per rule
family, language or cross-cutting concern."""
