"""The fixer's parts; the public entry points are :mod:`anydev.fix`.

One module per language, rule family and cross-cutting concern:

engine        fix_source / fix_paths: checks, the language drivers, the parse of
              the result, atomic writes, diffs, the results
versions      refusals before any rewrite: the target torch, ``keep`` globs, mocks
rows          what the compat table allows for a finding (safe/unsafe, renames)
templates     the table's templates: placeholders, call forms, torch's spelling
text, edits   a file's text and encoding; sorted non-overlapping edits of it
python_tree   a Python finding's node in the syntax tree, and what is around it;
              the changed statements parsed again before a file is written
python_api    Python API calls and references (the Python driver)
imports       Python imports made unused by the rewrites, ``import torch`` added
guards        the code around a Python finding that forbids its rewrite
evidence      positive evidence that an availability check may become generic
analysis      the syntax-tree analysis guards asks (version guards, bindings, ...)
cpp_lex       C++ text without a compiler: code mask, argument items, brackets
cpp           C++ calls and references (the C++ driver)
cpp_classes   C++ legacy classes whose replacement takes the same arguments
cpp_includes  C++ headers the rewrites need; using-declarations made unused
mocks         mock targets moved with the calls they patch (whole tree)
literals      device literals and idioms (AD9xx), fixed a function at a time
summary       ``anydev fix --summary``: a pull-request description
"""
