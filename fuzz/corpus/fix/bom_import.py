﻿from torch.cuda import empty_cache

empty_cache()
