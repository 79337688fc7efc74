/* site_key.c: identifies the Python call site that is calling into C right
 * now, for the once-per-call-site warnings of legacy entry points.
 *
 * Note [Call-site keys]: on CPython 3.11 and 3.12 the interpreter's frame
 * (_PyInterpreterFrame) records the instruction being executed, so the
 * address of that instruction identifies the call site exactly and costs
 * three loads; it is unique while the code object lives (the caller of
 * anydev_site_key pins the code object). This needs the interpreter's
 * internal headers, so it is C, compiled on its own. Other versions use the
 * frame objects (PyEval_GetFrame), which is slower (it may create a frame
 * object) but equivalent: the key is the code object's address plus the
 * byte offset of the instruction.
 *
 * Note [Frame API by version]: the public accessors came in steps
 * (https://docs.python.org/3/whatsnew/3.11.html#pyframeobject-3-11-hiding):
 * PyFrame_GetCode and PyFrame_GetBack since 3.9, PyFrame_GetGlobals and
 * PyFrame_GetLasti only since 3.11, when PyFrameObject became opaque. On 3.9
 * and 3.10 the struct is public (<frameobject.h>) and f_lasti is read
 * directly; 3.9 counts it in bytes, 3.10 in code units (two bytes each).
 */
#include <patchlevel.h> /* PY_VERSION_HEX, before Python.h decides what to expose */

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
#define ANYDEV_FAST_FRAMES 1
#define Py_BUILD_CORE_MODULE 1 /* for the internal frame headers below */
#endif

#include <Python.h>

#include "site_key.h"

#ifdef ANYDEV_FAST_FRAMES
#include "internal/pycore_frame.h"
#include "internal/pycore_pystate.h"
#elif PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>
#endif

const void* anydev_site_key(int depth, PyCodeObject** code, PyObject** globals, int* offset) {
#ifdef ANYDEV_FAST_FRAMES
  PyThreadState* ts = _PyThreadState_GET();
  _PyInterpreterFrame* f = ts->cframe->current_frame;
  for (; f != NULL && depth > 0; --depth) f = f->previous;
  /* Skip frames that have not started (owned by a generator being created). */
  while (f != NULL && _PyFrame_IsIncomplete(f)) f = f->previous;
  if (f == NULL) return NULL;
  *code = f->f_code;
  *globals = f->f_globals;
  *offset = (int)((f->prev_instr - _PyCode_CODE(f->f_code)) * (Py_ssize_t)sizeof(_Py_CODEUNIT));
  return f->prev_instr;
#else
  PyFrameObject* f = PyEval_GetFrame();
  /* PyFrame_GetBack returns a new reference; the chain of frames below the
   * running one keeps each of them alive for the duration of this call. */
  for (; f != NULL && depth > 0; --depth) {
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_XDECREF(back);
    f = back;
  }
  if (f == NULL) return NULL;
  PyCodeObject* c = PyFrame_GetCode(f);
  *code = c;
  Py_DECREF(c); /* the frame keeps it alive for the duration of the call */
#if PY_VERSION_HEX >= 0x030B0000
  *globals = PyFrame_GetGlobals(f);
  Py_DECREF(*globals);
  *offset = PyFrame_GetLasti(f);
#elif PY_VERSION_HEX >= 0x030A0000
  *globals = f->f_globals;
  *offset = f->f_lasti * (int)sizeof(_Py_CODEUNIT);
#else
  *globals = f->f_globals;
  *offset = f->f_lasti;
#endif
  return (const char*)c + *offset;
#endif
}

const void* anydev_site_instr(void) {
#ifdef ANYDEV_FAST_FRAMES
  _PyInterpreterFrame* f = _PyThreadState_GET()->cframe->current_frame;
  while (f != NULL && _PyFrame_IsIncomplete(f)) f = f->previous;
  return f == NULL ? NULL : f->prev_instr;
#else
  PyCodeObject* code;
  PyObject* globals;
  int offset;
  return anydev_site_key(0, &code, &globals, &offset);
#endif
}
