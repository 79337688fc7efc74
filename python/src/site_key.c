/* site_key.c: identifies the Python call site that is calling into C right
 * now, for the once-per-call-site warnings of legacy entry points.
 *
 * Note [Call-site keys]: on CPython 3.11 and 3.12 the interpreter's frame
 * (_PyInterpreterFrame) records the instruction being executed, so the
 * address of that instruction identifies the call site exactly and costs
 * three loads; it is unique while the code object lives (the caller of
 * anydev_site_key pins the code object). This needs the interpreter's
 * internal headers, so it is C, compiled on its own. Other versions use the
 * public frame API (PyEval_GetFrame + PyFrame_GetLasti), which is slower
 * (it may create a frame object) but equivalent.
 */
#define Py_BUILD_CORE_MODULE 1
#include <Python.h>

#include "site_key.h"

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000
#define ANYDEV_FAST_FRAMES 1
#include "internal/pycore_frame.h"
#include "internal/pycore_pystate.h"
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
  for (; f != NULL && depth > 0; --depth) f = PyFrame_GetBack(f), Py_XDECREF(f);
  if (f == NULL) return NULL;
  PyCodeObject* c = PyFrame_GetCode(f);
  *code = c;
  Py_DECREF(c); /* the frame keeps it alive for the duration of the call */
  *globals = PyFrame_GetGlobals(f);
  Py_DECREF(*globals);
  *offset = PyFrame_GetLasti(f);
  return (const char*)c + *offset;
#endif
}
