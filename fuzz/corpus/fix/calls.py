import torch

# keyword arguments through the templates
a = torch.cuda.Stream(priority=-1)
b = torch.cuda.Stream(0, -1)
c = torch.cuda.synchronize(device=0)
d = torch.cuda.Event(True)
e = torch.cuda.amp.autocast(True, torch.bfloat16)
f = torch.cuda.device_of(tensor)

# what cannot be bound to the legacy signature is left alone, with the reason
args, kwargs = (0,), {}
torch.cuda.synchronize(*args)
torch.cuda.memory_allocated(**kwargs)
torch.cuda.Stream(stream_id=1, device_index=0, device_type=1)
torch.cuda.Event(enable_timing=True, external=True)
torch.cuda.memory_stats(0, 1)
torch.cuda.manual_seed(*args)  # no template: the arguments are kept as they are

# multi-line calls keep their layout, comments and trailing commas
g = torch.cuda.memory_allocated(  # which device
    device=torch.cuda.current_device(),  # the current one
)
with torch.cuda.amp.autocast(
    enabled=True,  # on
    dtype=torch.bfloat16,
):
    pass
h = torch.cuda.amp.GradScaler(
    init_scale=2.0**10,
    growth_interval=100,
)

# nested calls
torch.cuda.set_device(torch.cuda.memory_allocated(device=torch.cuda.current_device()))

# references
fn = torch.cuda.synchronize
ctx = torch.cuda.amp.autocast
lo, hi = torch.cuda.Stream.priority_range()
try:
    pass
except (torch.cuda.OutOfMemoryError, torch.cuda.AcceleratorError):
    pass


# decorators, bare and called
@torch.cuda.amp.custom_fwd
def fwd(*args):
    pass


@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
def fwd32(*args):
    pass


@torch.cuda.amp.custom_bwd
def bwd(*args):
    pass


# f-strings (Python 3.9 syntax): a template's string takes the free quote
print(f"{torch.cuda.current_device()} {torch.cuda.amp.GradScaler()}")
print(f'{torch.cuda.amp.GradScaler()!r:>{torch.cuda.device_count()}}')
print(f"""{torch.cuda.amp.autocast()}""")
print(f"{{torch.cuda.synchronize()}} is text, {torch.cuda.synchronize()} is not")
