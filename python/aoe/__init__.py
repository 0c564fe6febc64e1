"""aoe - ONNX Runtime's Python session API on libaoe.

The subset of onnxruntime that inference scripts use, so that

    import aoe as onnxruntime

runs such a script unchanged on libaoe, the runtime that aoe tunes:

    sess = onnxruntime.InferenceSession("model.onnx")
    x = sess.get_inputs()[0]
    print(x.name, x.shape, x.type)      # 'x' [1, 3, 48, 'W'] tensor(float)
    out = sess.run(None, {x.name: array})

A ctypes binding of libaoe.so's session API (aoe_session_run(3)).  With
AOE_MODE=1 or 2 in the environment, every input shape a script runs is
tuned before it runs, as aoe-run(1) is; a later run without AOE_MODE
uses the bank.
"""

import ctypes
import os
import threading

import numpy as np

__all__ = ["InferenceSession", "SessionOptions", "RunOptions", "NodeArg",
           "get_available_providers", "get_device", "AoeError",
           "InvalidArgument", "NoSuchFile", "InvalidGraph", "Fail",
           "NotImplemented", "__version__"]

# Set by make install to the directory libaoe.so was installed in.
_LIBDIR = None

_MAXDIM = 8
_EDATA, _EUNSUP, _EIO, _ENOMEM = 3, 4, 5, 6


class AoeError(RuntimeError):
    """An error of libaoe; the message is the library's."""


class InvalidArgument(AoeError):
    """A bad input: its name, type, rank, shape or size."""


class NoSuchFile(AoeError):
    """A model file that cannot be read."""


class InvalidGraph(AoeError):
    """A model that is malformed."""


class NotImplemented(AoeError):  # noqa: A001 - onnxruntime's name
    """A valid model that libaoe does not support."""


class Fail(AoeError):
    """Any other failure."""


class _Value(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                ("dims", ctypes.c_int64 * _MAXDIM),
                ("data", ctypes.c_void_p), ("nbytes", ctypes.c_size_t),
                ("lib_owned", ctypes.c_int)]


class _Info(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int),
                ("ndim", ctypes.c_int),
                ("dims", ctypes.c_int64 * _MAXDIM),
                ("dim_names", ctypes.c_char_p * _MAXDIM)]


class _Options(ctypes.Structure):
    _fields_ = [("nthreads", ctypes.c_int), ("use_bank", ctypes.c_int),
                ("bank_path", ctypes.c_char_p),
                ("cache_size", ctypes.c_int), ("profile", ctypes.c_int)]


class _Stats(ctypes.Structure):
    _fields_ = [("runs", ctypes.c_long), ("prepares", ctypes.c_long),
                ("hits", ctypes.c_long), ("evictions", ctypes.c_long),
                ("cached", ctypes.c_int), ("bank_nodes", ctypes.c_int),
                ("nodes", ctypes.c_int)]


def _candidates():
    env = os.environ.get("AOE_LIBRARY")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    # The build tree: python/aoe/ beside lib/.
    yield os.path.join(here, "..", "..", "lib", "libaoe.so.0")
    if _LIBDIR:
        yield os.path.join(_LIBDIR, "libaoe.so.0")
    yield "libaoe.so.0"


def _load():
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            errors.append(str(e))
    raise ImportError("aoe: cannot load libaoe.so.0 (set AOE_LIBRARY): " +
                      "; ".join(errors or ["not found"]))


_lib = _load()
_P = ctypes.c_void_p
_lib.aoe_errmsg.restype = ctypes.c_char_p
_lib.aoe_errmsg.argtypes = []
_lib.aoe_version.restype = ctypes.c_char_p
_lib.aoe_session_options_init.argtypes = [ctypes.POINTER(_Options)]
_lib.aoe_session_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(_Options),
                                  ctypes.POINTER(_P)]
_lib.aoe_session_open_buffer.argtypes = [ctypes.c_char_p, ctypes.c_size_t,
                                         ctypes.POINTER(_Options),
                                         ctypes.POINTER(_P)]
_lib.aoe_session_close.argtypes = [_P]
_lib.aoe_session_close.restype = None
_lib.aoe_session_ninputs.argtypes = [_P]
_lib.aoe_session_noutputs.argtypes = [_P]
_lib.aoe_session_input.argtypes = [_P, ctypes.c_int, ctypes.POINTER(_Info)]
_lib.aoe_session_output.argtypes = [_P, ctypes.c_int, ctypes.POINTER(_Info)]
_lib.aoe_session_run.argtypes = [_P, ctypes.POINTER(_Value),
                                 ctypes.POINTER(_Value)]
_lib.aoe_value_free.argtypes = [ctypes.POINTER(_Value)]
_lib.aoe_value_free.restype = None
_lib.aoe_session_stats_get.argtypes = [_P, ctypes.POINTER(_Stats)]

__version__ = _lib.aoe_version().decode()
_run = _lib.aoe_session_run
_char = ctypes.c_char
_addressof = ctypes.addressof


def _addr(a):
    """The address of a numpy array's data."""
    try:
        return _addressof(_char.from_buffer(a))
    except (TypeError, ValueError):     # read-only, or empty
        return a.ctypes.data

# ONNX element type codes: numpy's dtype and ONNX Runtime's type name.
_TYPES = {
    1: (np.float32, "tensor(float)"), 2: (np.uint8, "tensor(uint8)"),
    3: (np.int8, "tensor(int8)"), 4: (np.uint16, "tensor(uint16)"),
    5: (np.int16, "tensor(int16)"), 6: (np.int32, "tensor(int32)"),
    7: (np.int64, "tensor(int64)"), 9: (np.bool_, "tensor(bool)"),
    10: (np.float16, "tensor(float16)"), 11: (np.float64, "tensor(double)"),
    12: (np.uint32, "tensor(uint32)"), 13: (np.uint64, "tensor(uint64)"),
}
_CODES = {np.dtype(t): c for c, (t, _) in _TYPES.items()}


def _error(rc, opening=False):
    msg = (_lib.aoe_errmsg() or b"unknown error").decode(errors="replace")
    if rc == -_EIO:
        return NoSuchFile(msg)
    if rc == -_EUNSUP:
        return NotImplemented(msg)
    if rc == -_EDATA:
        return InvalidGraph(msg) if opening else InvalidArgument(msg)
    return Fail(msg)


def get_available_providers():
    return ["CPUExecutionProvider"]


def get_device():
    return "CPU"


class SessionOptions:
    """Options of a session.  intra_op_num_threads is the threads a run
    uses (0: every CPU); the rest of onnxruntime's options are accepted
    and have no effect.  aoe's own: use_bank, bank_path, cache_size,
    enable_profiling."""

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.graph_optimization_level = None
        self.execution_mode = None
        self.log_severity_level = 2
        self.enable_profiling = False
        self.use_bank = True
        self.bank_path = None
        self.cache_size = 8


class RunOptions:
    """Accepted for onnxruntime's signature; no effect."""

    def __init__(self):
        self.log_severity_level = 2


class NodeArg:
    """A model input or output: name, shape (ints, with the dimension's
    name or None where it is dynamic) and type ('tensor(float)')."""

    def __init__(self, name, shape, type):
        self.name = name
        self.shape = shape
        self.type = type

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (
            self.name, self.type, self.shape)


def _node_arg(info):
    shape = None
    if info.ndim >= 0:
        shape = []
        for d in range(info.ndim):
            if info.dims[d] >= 0:
                shape.append(int(info.dims[d]))
            else:
                n = info.dim_names[d]
                shape.append(n.decode() if n else None)
    t = _TYPES.get(info.dtype)
    return NodeArg(info.name.decode(), shape,
                   t[1] if t else "tensor(unknown%d)" % info.dtype)


class InferenceSession:
    """A model opened for inference, as onnxruntime.InferenceSession."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None,
                 provider_options=None, **kwargs):
        self._s = None
        o = _Options()
        _lib.aoe_session_options_init(ctypes.byref(o))
        so = sess_options if sess_options is not None else SessionOptions()
        self._options = so
        n = int(getattr(so, "intra_op_num_threads", 0) or 0)
        if n < 0 or n > 1024:
            raise InvalidArgument("intra_op_num_threads %d is out of range "
                                  "0-1024" % n)
        o.nthreads = n
        o.use_bank = 1 if getattr(so, "use_bank", True) else 0
        bp = getattr(so, "bank_path", None)
        o.bank_path = os.fsencode(bp) if bp else None
        o.cache_size = int(getattr(so, "cache_size", 8))
        o.profile = 1 if getattr(so, "enable_profiling", False) else 0
        s = _P()
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            buf = bytes(path_or_bytes)
            rc = _lib.aoe_session_open_buffer(buf, len(buf), ctypes.byref(o),
                                              ctypes.byref(s))
        elif isinstance(path_or_bytes, (str, os.PathLike)):
            rc = _lib.aoe_session_open(os.fsencode(path_or_bytes),
                                       ctypes.byref(o), ctypes.byref(s))
        else:
            raise TypeError("InferenceSession wants a path or bytes, not %s"
                            % type(path_or_bytes).__name__)
        if rc < 0:
            raise _error(rc, opening=True)
        self._s = s
        info = _Info()
        self._inputs, self._outputs = [], []
        for i in range(_lib.aoe_session_ninputs(s)):
            _lib.aoe_session_input(s, i, ctypes.byref(info))
            self._inputs.append(_node_arg(info))
        for i in range(_lib.aoe_session_noutputs(s)):
            _lib.aoe_session_output(s, i, ctypes.byref(info))
            self._outputs.append(_node_arg(info))
        self._in_index = {a.name: i for i, a in enumerate(self._inputs)}
        self._in_names = [a.name for a in self._inputs]
        # Runs are serialised (as the library does): the values are
        # built in place, once a session.
        self._lock = threading.Lock()
        self._ins = (_Value * max(1, len(self._inputs)))()
        self._outs = (_Value * max(1, len(self._outputs)))()
        self._out_index = {a.name: i for i, a in enumerate(self._outputs)}
        # Output shapes by input shapes: a known shape's outputs are
        # written straight into new numpy arrays.
        self._out_shapes = {}

    def __del__(self):
        s, self._s = getattr(self, "_s", None), None
        if s and _lib is not None:
            _lib.aoe_session_close(s)

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        return []

    def get_providers(self):
        return ["CPUExecutionProvider"]

    def get_provider_options(self):
        return {"CPUExecutionProvider": {}}

    def get_session_options(self):
        return self._options

    def set_providers(self, providers=None, provider_options=None):
        pass

    def stats(self):
        """What the session did: runs, prepares (input shapes prepared),
        hits, evictions, cached, and of the last shape run the nodes with
        a schedule from the bank (bank_nodes) of all (nodes)."""
        st = _Stats()
        _lib.aoe_session_stats_get(self._s, ctypes.byref(st))
        return {f: getattr(st, f) for f, _ in _Stats._fields_}

    def _bad_feed(self, input_feed):
        for k in input_feed:
            if k not in self._in_index:
                return InvalidArgument(
                    "invalid input name: '%s' (inputs: %s)" % (
                        k, ", ".join(a.name for a in self._inputs)))
        missing = [a.name for a in self._inputs if a.name not in input_feed]
        return InvalidArgument("required inputs %s are missing from the "
                               "input feed %s" % (missing, list(input_feed)))

    def _want(self, output_names):
        if output_names is None:
            return None
        if isinstance(output_names, str):
            raise InvalidArgument("output_names must be a list of names or "
                                  "None")
        want = []
        for name in output_names:
            i = self._out_index.get(name)
            if i is None:
                raise InvalidArgument("invalid output name: '%s'" % name)
            want.append(i)
        return want

    def run(self, output_names, input_feed, run_options=None):
        """Run the model: input_feed maps input names to arrays; returns
        the outputs named (all when None), a list of numpy arrays."""
        if self._s is None:
            raise Fail("the session is closed")
        if not isinstance(input_feed, dict):
            raise InvalidArgument("input_feed must be a dict of input "
                                  "names and arrays")
        names = self._in_names
        if len(input_feed) != len(names):
            raise self._bad_feed(input_feed)
        want = self._want(output_names)
        with self._lock:
            ins, outs = self._ins, self._outs
            keep = []
            key = []
            for i, name in enumerate(names):
                x = input_feed.get(name)
                if x is None:
                    raise self._bad_feed(input_feed)
                if type(x) is not np.ndarray:
                    x = np.asarray(x)
                code = _CODES.get(x.dtype)
                sh = x.shape
                if code is None:
                    raise InvalidArgument(
                        "input '%s': element type %s is not one libaoe "
                        "knows" % (name, x.dtype))
                if len(sh) > _MAXDIM:
                    raise InvalidArgument("input '%s': rank %d, the model "
                                          "wants %d" % (name, len(sh), len(
                                              self._inputs[i].shape or [])))
                try:
                    addr = _addressof(_char.from_buffer(x))
                except (TypeError, ValueError):
                    # Read-only, empty, or not contiguous.
                    x = np.ascontiguousarray(x)
                    addr = x.ctypes.data
                keep.append(x)
                v = ins[i]
                v.dtype = code
                v.ndim = len(sh)
                v.dims[:len(sh)] = sh
                v.data = addr
                v.nbytes = x.nbytes
                key.append(sh)
                key.append(code)
            key = tuple(key)
            nout = len(self._outputs)
            shapes = self._out_shapes.get(key)
            res = None
            if shapes is not None:
                res = [np.empty(sh, dtype=dt) for sh, dt in shapes]
                for i in range(nout):
                    o = outs[i]
                    o.data = _addr(res[i])
                    o.nbytes = res[i].nbytes
                    o.lib_owned = 0
            else:
                for i in range(nout):
                    outs[i].data = None
                    outs[i].lib_owned = 0
            # The library serialises runs of one session too; ctypes lets
            # go of the GIL meanwhile.
            rc = _run(self._s, ins, outs)
            if rc < 0:
                raise _error(rc)
            if res is None:
                res = []
                shapes = []
                for i in range(nout):
                    v = outs[i]
                    dt = np.dtype(_TYPES[v.dtype][0])
                    sh = tuple(v.dims[:v.ndim])
                    r = np.empty(sh, dtype=dt)
                    if v.nbytes:
                        ctypes.memmove(_addr(r), v.data, v.nbytes)
                    _lib.aoe_value_free(ctypes.byref(v))
                    res.append(r)
                    shapes.append((sh, dt))
                if len(self._out_shapes) >= 64:
                    self._out_shapes.clear()
                self._out_shapes[key] = shapes
        if want is None:
            return res
        return [res[i] for i in want]
