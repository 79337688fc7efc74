/* site_key.h: the call-site key of the Python frame calling into C. */
#ifndef ANYDEV_PYTHON_SITE_KEY_H_
#define ANYDEV_PYTHON_SITE_KEY_H_

#include <Python.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Internal to the extension: hidden, so that calls do not go through the PLT
 * and link-time optimisation may inline them into the hot path. */
#if defined(__GNUC__)
#define ANYDEV_SITE_KEY_INTERNAL __attribute__((visibility("hidden")))
#else
#define ANYDEV_SITE_KEY_INTERNAL
#endif

/* Returns a key that identifies the instruction the Python frame `depth`
 * levels above the current one is executing (0: the frame that called into
 * C), with borrowed references to its code object and globals and the byte
 * offset of the instruction, or NULL when there is no such frame. The key is
 * unique while the code object lives. */
ANYDEV_SITE_KEY_INTERNAL const void* anydev_site_key(int depth, PyCodeObject** code, PyObject** globals, int* offset);

/* Returns the key anydev_site_key(0, ...) returns, without the code object,
 * globals and offset that only a site's first call needs: the hot path of a
 * legacy call compares it with the last site seen. */
ANYDEV_SITE_KEY_INTERNAL const void* anydev_site_instr(void);

#ifdef __cplusplus
}
#endif

#endif /* ANYDEV_PYTHON_SITE_KEY_H_ */
