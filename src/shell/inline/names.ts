// Which interpreter names are which language, in one place: the interpreters family, the script-file
// reader and the inline readers' index all ask here (this file loads nothing else).

/** Python's interpreters: CPython by version, PyPy, and IPython (whose `!cmd` lines and magics run a shell). */
export const PYTHON_NAMES = /^(python|pypy|ipython)[0-9.]*$/;
/** Interpreters whose code the inline-code readers read (src/shell/inline/). */
export const READ_CODE_NAMES = /^((python|pypy|ipython)[0-9.]*|node|nodejs|perl|ruby)$/;
