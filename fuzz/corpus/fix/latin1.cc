// Copyright © 2019 (Latin-1)
int a = c10::cuda::device_count();
