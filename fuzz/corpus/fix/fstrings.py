import torch

print(f"{torch.cuda.current_device()} is the device, torch.cuda.synchronize() is text")
print(f"{{torch.cuda.empty_cache()}} is escaped, {torch.cuda.device_count()} is not")
print(f"{value:{torch.cuda.memory_allocated()}d} nested in a format spec")
print(f"{value!r:>{width}} {torch.cuda.is_available()=}")
print(rf"\d+ {torch.cuda.max_memory_reserved()}" F'{x}' fr'{torch.cuda.seed()}')
print(f"{data["key"]} {torch.cuda.initial_seed()}")  # PEP 701 quotes
print(f"\N{BULLET} {torch.cuda.seed_all()}")
print(f"""
{
    torch.cuda.manual_seed(0)
}
torch.cuda.manual_seed_all(0)
""")
print("%s" % torch.cuda.get_rng_state_all(), b"{torch.cuda.synchronize()}")
