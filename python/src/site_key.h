/* site_key.h: the call-site key of the Python frame calling into C. */
#ifndef ANYDEV_PYTHON_SITE_KEY_H_
#define ANYDEV_PYTHON_SITE_KEY_H_

#include <Python.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Returns a key that identifies the instruction the Python frame `depth`
 * levels above the current one is executing (0: the frame that called into
 * C), with borrowed references to its code object and globals and the byte
 * offset of the instruction, or NULL when there is no such frame. The key is
 * unique while the code object lives. */
const void* anydev_site_key(int depth, PyCodeObject** code, PyObject** globals, int* offset);

#ifdef __cplusplus
}
#endif

#endif /* ANYDEV_PYTHON_SITE_KEY_H_ */
