# avx2.sh: sourced by the scripts here for their -A, which holds both
# sides to AVX2 on an AVX-512 machine: aoe by AOE_MAX_ISA=avx2, ONNX
# Runtime by noavx512.so (see noavx512.c).  hold_avx2 exports the one and
# sets $node to the command that runs node under the other; $here is the
# caller's bench/ folder.  "hold_avx2 aoe" holds aoe alone, for a caller
# that runs no ONNX Runtime this time: it works where noavx512.so cannot
# (a CPU without CPUID faulting).
hold_avx2() {
	AOE_MAX_ISA=avx2
	export AOE_MAX_ISA
	[ "${1-}" != aoe ] || return 0
	make -s -C "$here" noavx512.so || exit 1
	node="env LD_PRELOAD=$here/noavx512.so NODE_OPTIONS=--disable-wasm-trap-handler node"
	# Fail here, not in the middle of a table.
	$node -e 0 || {
		echo "$0: -A: ONNX Runtime cannot be held to AVX2 here" >&2
		exit 1
	}
}
