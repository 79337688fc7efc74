import torch

x = torch.cuda.memory_allocated(
    device=torch.device("cuda", 0),
)
y = (torch
     .cuda
     .synchronize())
z = torch.cuda \
    .empty_cache()
torch.cuda.set_rng_state(
    make_state(
        [1, 2, 3],
        {"a": (4, 5)},
    ),
    "cuda",
)
total = sum(torch.cuda.max_memory_allocated(i) for i in range(torch.cuda.device_count()))
