# aoe - operator and subgraph auto-tuner for CPU inference.
#
#   make            build lib/libaoe.a and the tools
#   make check      build and run the TAP tests (prove)
#   make bench      benchmarks against peers (needs `make bench-deps`)
#   make bench-models   fetch the real models and ONNX Runtime (cached)
#   make bench-e2e  end-to-end latency against ONNX Runtime, before and
#                   after tuning (bench/e2e.sh; long)
#   make fuzz       run every libFuzzer target FUZZ_SECONDS (fuzz/README)
#   make fuzz-smoke each fuzz target a few seconds (CI)
#   make check-tsan the thread pool and the bank's readers and writers
#                   under ThreadSanitizer
#   make deps       install the Debian packages the build needs (as root)
#   make install    install under $(DESTDIR)$(PREFIX): the tools, libaoe
#                   (.so and .a, aoe_session.h, aoe.pc) and the Python module

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(PREFIX)/bin
LIBDIR = $(PREFIX)/lib
INCLUDEDIR = $(PREFIX)/include
PKGCONFIGDIR = $(LIBDIR)/pkgconfig
MANDIR = $(PREFIX)/share/man
SHAREDIR = $(PREFIX)/share/aoe

CC ?= cc
CFLAGS ?= -O3 -g
# The kernels are written for AVX2+FMA (x86-64-v3); override to port.
ARCHFLAGS ?= -march=x86-64-v3
SAN ?=
# libaoe's layers, bottom up: a file may call only files of its own
# layer or of a layer below it (make check-layers).
LAYERS = base ir kernels runtime passes bank engine tune session
XCFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter \
	-Wno-sign-compare -pthread $(ARCHFLAGS) -Ilib \
	$(patsubst %,-Ilib/%,$(LAYERS)) -Ibuild $(SAN) \
	-DAOE_SHAREDIR='"$(SHAREDIR)"'
# libaoe's objects go into libaoe.so too.  Calls inside the library stay
# direct: no symbol of it is interposed.
PICFLAGS = -fPIC -fno-semantic-interposition
LDFLAGS ?=
LDLIBS = -lprotobuf-c -lcjson -larchive -lm
PROTOC_C ?= protoc-c
ONNX_PROTO ?= /usr/include/onnx/onnx.proto

DEB_PACKAGES = build-essential libcjson-dev libarchive-dev parallel \
	libprotobuf-c-dev protobuf-c-compiler libonnx-dev libonnx-testdata \
	mandoc gnuplot-nox valgrind pkg-config python3 python3-numpy \
	clang libclang-rt-14-dev
DEB_BENCH = libopenblas-dev libdnnl-dev python3-torchvision python3-onnx

LIBSRC = $(foreach l,$(LAYERS),$(wildcard lib/$(l)/*.c))
LIBOBJ = $(LIBSRC:.c=.o) build/onnx.pb-c.o
LIBHDR = lib/aoe.h $(wildcard lib/*/*.h) build/onnx.pb-c.h

# The shared library: its soname changes with the session API's major
# version; only the session API (lib/session/libaoe.map) is exported.
VERSION = $(shell sed -n 's/^\#define AOE_VERSION "\(.*\)"/\1/p' \
	lib/base/aoe_base.h)
SOMAJOR = 0
SONAME = libaoe.so.$(SOMAJOR)
SOLIB = lib/libaoe.so.$(VERSION)
PUBHDR = lib/session/aoe_session.h
# Debian's python3 reads PREFIX/lib/python3.X/dist-packages for
# /usr/local, /usr/lib/python3/dist-packages for /usr.
PYTHON ?= /usr/bin/python3
PYVER = $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PYTHONDIR = $(if $(filter /usr,$(PREFIX)),$(PREFIX)/lib/python3/dist-packages,$(PREFIX)/lib/python$(PYVER)/dist-packages)

TOOLS = $(patsubst %.c,%,$(wildcard tools/aoe-*.c))
SCRIPTS = $(wildcard pipelines/aoe*)
TESTBIN = $(patsubst %.c,%,$(wildcard tests/*.c))
EXAMPLE = share/aoe/models/example.onnx
MAN1 = $(wildcard man/man1/*.1)
MAN5 = $(wildcard man/man5/*.5)
MAN7 = $(wildcard man/man7/*.7)
MAN3 = $(wildcard man/man3/*.3)

all: $(TOOLS) $(EXAMPLE) lib/libaoe.so build/aoe.pc

# One protoc-c run makes both files (a grouped target: under -j a plain
# two-target rule would run it twice, concurrently, on the same files).
build/onnx.pb-c.c build/onnx.pb-c.h &: $(ONNX_PROTO)
	@mkdir -p build
	$(PROTOC_C) --c_out=build -I$(dir $(ONNX_PROTO)) $(ONNX_PROTO)

build/onnx.pb-c.o: build/onnx.pb-c.c build/onnx.pb-c.h
	$(CC) $(XCFLAGS) $(PICFLAGS) -w $(CFLAGS) -c -o $@ build/onnx.pb-c.c

lib/%.o: lib/%.c $(LIBHDR)
	$(CC) $(XCFLAGS) $(PICFLAGS) $(CFLAGS) -c -o $@ $<

lib/libaoe.a: $(LIBOBJ)
	rm -f $@
	ar rcs $@ $(LIBOBJ)

$(SOLIB): $(LIBOBJ) lib/session/libaoe.map
	$(CC) $(XCFLAGS) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) \
	    -Wl,--version-script=lib/session/libaoe.map -Wl,-z,defs \
	    -o $@ $(LIBOBJ) $(LDLIBS)

lib/libaoe.so: $(SOLIB)
	ln -sf $(notdir $(SOLIB)) lib/$(SONAME)
	ln -sf $(SONAME) $@

# pkg-config's file for the installed library (PREFIX is baked in).
build/aoe.pc: Makefile lib/base/aoe_base.h
	@mkdir -p build
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' \
	    'includedir=$${prefix}/include' '' 'Name: aoe' \
	    'Description: operator and subgraph auto-tuner and CPU inference runtime' \
	    'Version: $(VERSION)' 'Libs: -L$${libdir} -laoe' \
	    'Libs.private: $(LDLIBS) -pthread' \
	    'Cflags: -I$${includedir}' > $@

# One rule links every program.
tools/%: tools/%.c lib/libaoe.a
	$(CC) $(XCFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< lib/libaoe.a $(LDLIBS)
tests/%: tests/%.c tests/tap.h tests/onenode.h tests/convref.h lib/libaoe.a
	$(CC) $(XCFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< lib/libaoe.a $(LDLIBS)

# The bundled example is written by the project's own ONNX writer.
$(EXAMPLE): tests/mkexample
	@mkdir -p $(dir $@)
	tests/mkexample $@

check: all $(TESTBIN) check-layers
	PYTHON=$(PYTHON) prove -f tests/*.t

# No call from a lower layer to a higher one, no cycle between files:
# read from the objects' symbols (see lib/check-layers).
check-layers: $(LIBOBJ)
	sh lib/check-layers $(LAYERS) -- $(LIBSRC:.c=.o)

# The same tests under AddressSanitizer and UndefinedBehaviorSanitizer
# (with float-cast-overflow, a number cast to an integer it does not fit,
# which GCC's "undefined" leaves out).
ASAN_SAN = -fsanitize=address,undefined,float-cast-overflow \
    -fno-sanitize-recover=undefined,float-cast-overflow
check-asan:
	$(MAKE) clean
	$(MAKE) CFLAGS='-O1 -g -fno-omit-frame-pointer' SAN='$(ASAN_SAN)' check

# Coverage-guided fuzzing (fuzz/README): libaoe's sources built again by
# clang with libFuzzer, ASan and UBSan into build/fuzz/ (the normal
# objects are left alone), one harness a target.  New inputs go to
# build/fuzz/corpus/TARGET, beside the seeds of fuzz/corpus/TARGET and
# those made from the test fixtures (build/fuzz/seeds/TARGET).
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_SECONDS ?= 5
FUZZ_NICE ?= nice -n 15
FUZZ_TARGETS = onnx graph bank records archive report sched
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS = -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN)
FUZZ_XCFLAGS = $(filter-out $(SAN),$(XCFLAGS)) -Ifuzz \
	-DFZ_EXAMPLE='"$(CURDIR)/$(EXAMPLE)"'
FUZZ_OBJ = $(patsubst %,build/fuzz/%,$(LIBOBJ))
FUZZ_BIN = $(patsubst %,build/fuzz/fuzz_%,$(FUZZ_TARGETS))
FUZZ_COV = -fsanitize=fuzzer-no-link
FUZZ_OPTS = -timeout=20 -rss_limit_mb=2048 -close_fd_mask=3
# Longest input per target: a model; a bank of the models' nodes (12 KB);
# records and reports a few dozen lines (each line costs a schedule check).
FUZZ_MAXLEN = onnx:65536 graph:65536 bank:16384 records:4096 \
	archive:65536 report:4096 sched:256
# The harnesses' scratch banks (fsync and rename per commit) on a tmpfs.
FUZZ_TMPDIR ?= $(if $(wildcard /dev/shm/.),/dev/shm,$(or $(TMPDIR),/tmp))

build/fuzz/lib/%.o: lib/%.c $(LIBHDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_XCFLAGS) $(FUZZ_CFLAGS) $(FUZZ_COV) -c -o $@ $<
# The kernels' inner loops without comparison tracing (edges are still
# counted): tracing every loop bound took half of fuzz_sched's time, and
# their values teach the fuzzer nothing about the inputs.
build/fuzz/lib/kernels/%.o: FUZZ_COV = -fsanitize=fuzzer-no-link \
	-fno-sanitize-coverage=trace-cmp
# Coverage and UBSan together on conv8c's and dwconv's unrolled kernels
# take clang half an hour or more each; ASan alone takes seconds.  (Both
# run under UBSan in check-asan.)
build/fuzz/lib/kernels/k_conv8c.o build/fuzz/lib/kernels/k_dwconv.o: \
	FUZZ_COV =
build/fuzz/lib/kernels/k_conv8c.o build/fuzz/lib/kernels/k_dwconv.o: \
	FUZZ_SAN = -fsanitize=address
build/fuzz/build/onnx.pb-c.o: build/onnx.pb-c.c build/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_XCFLAGS) -w $(FUZZ_CFLAGS) -c -o $@ $<
build/fuzz/aoe-report.o: tools/aoe-report.c $(LIBHDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_XCFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link \
	    -Dmain=aoe_report_main -c -o $@ $<
build/fuzz/libaoe.a: $(FUZZ_OBJ)
	rm -f $@
	ar rcs $@ $(FUZZ_OBJ)
build/fuzz/fuzz_report: build/fuzz/aoe-report.o
build/fuzz/fuzz_%: fuzz/fuzz_%.c $(wildcard fuzz/*.h) build/fuzz/libaoe.a
	$(FUZZ_CC) $(FUZZ_XCFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer \
	    -o $@ $< $(filter %.o,$^) build/fuzz/libaoe.a $(LDLIBS)

# Seeds from the fixtures: the example and ONNX's node tests, the graph
# fixtures, a bank and records of the models' nodes (fuzz_bank writes
# them), an archive of that bank, the timings of a guided run.
FUZZ_NODES = gemm_default_no_bias conv_with_strides_padding lstm_defaults \
	einsum_batch_matmul qlinearmatmul_2D maxpool_2d_default \
	layer_normalization_2d_axis0 scatter_elements_with_axis
build/fuzz/seeds/stamp: build/fuzz/fuzz_bank tools/aoe-bank $(EXAMPLE) \
	    tests/fixtures/small.json tests/fixtures/opat-dup.json
	rm -rf build/fuzz/seeds
	mkdir -p $(patsubst %,build/fuzz/seeds/%,$(FUZZ_TARGETS)) \
	    build/fuzz/seeds/tmp/bank
	cp $(EXAMPLE) build/fuzz/seeds/onnx/example.onnx
	for t in $(FUZZ_NODES); do cp \
	    /usr/share/libonnx-testdata/data/node/test_$$t/model.onnx \
	    build/fuzz/seeds/onnx/$$t.onnx; done
	cp tests/fixtures/small.json tests/fixtures/opat-dup.json \
	    tests/fixtures/opat-guided-mm.json build/fuzz/seeds/graph/
	AOE_FUZZ_SEEDS=build/fuzz/seeds/tmp build/fuzz/fuzz_bank
	cp build/fuzz/seeds/tmp/bank.jsonl build/fuzz/seeds/bank/
	cp build/fuzz/seeds/tmp/records.jsonl build/fuzz/seeds/records/
	cp build/fuzz/seeds/tmp/records.jsonl build/fuzz/seeds/report/
	head -40 tests/fixtures/opat-guided-mm.timings > \
	    build/fuzz/seeds/records/timings.jsonl
	TUNE_BANK_PATH=$(CURDIR)/build/fuzz/seeds/tmp/bank tools/aoe-bank -q \
	    export --output build/fuzz/seeds/archive/bank.tar.gz \
	    build/fuzz/seeds/tmp/bank.jsonl
	rm -rf build/fuzz/seeds/tmp
	touch $@

# The harnesses again, in the normal build, to replay fuzz/regress/.
tests/fuzz-replay: $(wildcard fuzz/*.c fuzz/*.h)

fuzz-build: $(FUZZ_BIN) build/fuzz/seeds/stamp

# Each target in turn, FUZZ_SECONDS each; a crash stops the run (its
# input is left in build/fuzz/crash-TARGET-*).
fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do mkdir -p build/fuzz/corpus/$$t \
	    build/fuzz/seeds/$$t; \
	    echo "fuzz: $$t, $(FUZZ_SECONDS) s"; \
	    ml=$$(echo "$(FUZZ_MAXLEN)" | tr ' ' '\n' | sed -n "s/^$$t://p"); \
	    TMPDIR="$(FUZZ_TMPDIR)" $(FUZZ_NICE) build/fuzz/fuzz_$$t \
	    $(FUZZ_OPTS) -max_len=$${ml:-65536} \
	    -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -artifact_prefix=build/fuzz/crash-$$t- \
	    build/fuzz/corpus/$$t fuzz/corpus/$$t build/fuzz/seeds/$$t \
	    > build/fuzz/$$t.log 2>&1; rc=$$?; \
	    grep -E '^stat::number_of_executed_units' build/fuzz/$$t.log; \
	    if [ $$rc != 0 ]; then tail -60 build/fuzz/$$t.log; \
	    echo "fuzz: $$t failed (exit $$rc); log build/fuzz/$$t.log"; \
	    exit 1; fi; done

fuzz-smoke:
	$(MAKE) FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) fuzz

# ThreadSanitizer: libaoe built again by clang with -fsanitize=thread
# into build/tsan/, and the tests of the thread pool and of the bank's
# concurrent readers and writers run on it (any race report fails).
TSAN_CFLAGS = -O1 -g -fno-omit-frame-pointer -fsanitize=thread
TSAN_XCFLAGS = $(filter-out $(SAN),$(XCFLAGS))
TSAN_OBJ = $(patsubst %,build/tsan/%,$(LIBOBJ))

build/tsan/lib/%.o: lib/%.c $(LIBHDR)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(TSAN_XCFLAGS) $(TSAN_CFLAGS) -c -o $@ $<
build/tsan/build/onnx.pb-c.o: build/onnx.pb-c.c build/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(TSAN_XCFLAGS) -w $(TSAN_CFLAGS) -c -o $@ $<
build/tsan/libaoe.a: $(TSAN_OBJ)
	rm -f $@
	ar rcs $@ $(TSAN_OBJ)
build/tsan/unit-%: tests/unit-%.c tests/tap.h build/tsan/libaoe.a
	$(FUZZ_CC) $(TSAN_XCFLAGS) $(TSAN_CFLAGS) -o $@ $< \
	    build/tsan/libaoe.a $(LDLIBS)

check-tsan: build/tsan/unit-threads build/tsan/unit-pool
	d=$$(mktemp -d "$${TMPDIR:-/tmp}/aoe-tsan.XXXXXX"); \
	TSAN_OPTIONS='halt_on_error=1 exitcode=66 die_after_fork=0' build/tsan/unit-threads \
	    $$d && TSAN_OPTIONS='halt_on_error=1 exitcode=66 die_after_fork=0' \
	    build/tsan/unit-pool; rc=$$?; rm -rf $$d; exit $$rc

lint-man:
	mandoc -Tlint -W warning $(MAN1) $(MAN3) $(MAN5) $(MAN7)

bench: all
	$(MAKE) -C bench

# Real models and ONNX Runtime for the benchmarks, cached outside the tree.
bench-models: bench-deps
	bench/fetch-models.sh

# End to end against ONNX Runtime, untuned and tuned (see bench/README.md).
bench-e2e: all bench-models
	bench/e2e.sh

deps:
	@missing=; for p in $(DEB_PACKAGES); do \
	    dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	    apt-get update && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y $$missing; fi

# Node.js and npm by command, not by package: a host whose Node.js ships
# its own npm (NodeSource's) conflicts with Debian's npm package.
bench-deps:
	@missing=; for p in $(DEB_BENCH); do \
	    dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	command -v node >/dev/null 2>&1 || missing="$$missing nodejs"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	    apt-get update && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y $$missing; fi

example: all
	tools/aoe-run --runs 20 $(EXAMPLE)

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(MANDIR)/man3 \
	    $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
	    $(DESTDIR)$(SHAREDIR)/models $(DESTDIR)$(SHAREDIR)/bank \
	    $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
	    $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(PYTHONDIR)/aoe
	install -m 755 $(TOOLS) $(DESTDIR)$(BINDIR)
	for s in $(SCRIPTS); do install -m 755 $$s $(DESTDIR)$(BINDIR); done
	install -m 644 lib/libaoe.a $(DESTDIR)$(LIBDIR)
	install -m 755 $(SOLIB) $(DESTDIR)$(LIBDIR)
	ln -sf $(notdir $(SOLIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libaoe.so
	install -m 644 $(PUBHDR) $(DESTDIR)$(INCLUDEDIR)
	install -m 644 build/aoe.pc $(DESTDIR)$(PKGCONFIGDIR)
	sed 's|^_LIBDIR = None$$|_LIBDIR = "$(LIBDIR)"|' python/aoe/__init__.py \
	    > $(DESTDIR)$(PYTHONDIR)/aoe/__init__.py
	chmod 644 $(DESTDIR)$(PYTHONDIR)/aoe/__init__.py
	install -m 644 $(MAN3) $(DESTDIR)$(MANDIR)/man3
	for m in $(MAN3); do sed -n 's/^\.Nm \([a-z_]*\).*/\1/p' $$m | \
	    while read f; do [ -e $(DESTDIR)$(MANDIR)/man3/$$f.3 ] || \
	    ln -s $${m##*/} $(DESTDIR)$(MANDIR)/man3/$$f.3; done; done
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(MAN5) $(DESTDIR)$(MANDIR)/man5
	install -m 644 $(MAN7) $(DESTDIR)$(MANDIR)/man7
	install -m 644 $(EXAMPLE) $(DESTDIR)$(SHAREDIR)/models
	cp -R share/aoe/bank/. $(DESTDIR)$(SHAREDIR)/bank
	install -m 644 share/aoe/aoe.mk $(DESTDIR)$(SHAREDIR)
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 share/aoe/completions/aoe.bash \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions/aoe
	for t in $(TOOLS) $(SCRIPTS); do n=$${t##*/}; [ $$n = aoe ] || \
	    ln -sf aoe $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$n; done

uninstall:
	for t in $(TOOLS) $(SCRIPTS); do \
	    rm -f $(DESTDIR)$(BINDIR)/$${t##*/}; done
	rm -f $(DESTDIR)$(LIBDIR)/libaoe.a $(DESTDIR)$(LIBDIR)/$(notdir $(SOLIB)) \
	    $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libaoe.so \
	    $(DESTDIR)$(INCLUDEDIR)/$(notdir $(PUBHDR)) \
	    $(DESTDIR)$(PKGCONFIGDIR)/aoe.pc
	rm -rf $(DESTDIR)$(PYTHONDIR)/aoe
	for m in $(MAN3); do sed -n 's/^\.Nm \([a-z_]*\).*/\1/p' $$m | \
	    while read f; do rm -f $(DESTDIR)$(MANDIR)/man3/$$f.3; done; \
	    rm -f $(DESTDIR)$(MANDIR)/man3/$${m##*/}; done
	for m in $(MAN1) $(MAN5) $(MAN7); do \
	    rm -f $(DESTDIR)$(MANDIR)/$${m#man/}; done
	rm -rf $(DESTDIR)$(SHAREDIR)
	for t in aoe $(TOOLS) $(SCRIPTS); do \
	    rm -f $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$${t##*/}; done

clean:
	rm -rf build lib/*/*.o lib/libaoe.a lib/libaoe.so* $(TOOLS) $(TESTBIN) \
	    $(EXAMPLE) python/aoe/__pycache__

.PHONY: all check check-layers check-asan fuzz fuzz-build fuzz-smoke check-tsan \
	lint-man bench bench-models bench-e2e deps bench-deps example \
	install uninstall clean
.SECONDARY: $(LIBOBJ)
