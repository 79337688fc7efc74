int a = c10::cuda::device_count();
/* this comment never ends
int b = c10::cuda::device_count();
