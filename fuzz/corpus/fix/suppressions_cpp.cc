int a = c10::cuda::device_count();  // anydev: ignore
int b = c10::cuda::device_count();  // anydev: ignore[AD601,AD603]
int c = c10::cuda::device_count();  /* anydev: ignore[AD6] */
int d = c10::cuda::device_count();  // anydev: ignore[AD603]
