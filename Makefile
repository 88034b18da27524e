# bqlkit: BQL backports for LTS/distro kernels as DKMS modules and quilt series.
# `make help` lists every target and variable.

SHELL := /bin/bash
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
export BQLKIT_CACHE ?= /var/cache/bqlkit

# q: a value the user gave, single-quoted for the recipe's shell, so that
# no value (KVER='6.1;cmd', a path with spaces) becomes shell text.
q = '$(subst ','\'',$(1))'

# KVER: the kernel to build for; default: the running kernel if its headers
# are installed, else the distro's default kernel (scripts/pick-kernel.sh).
# With KDIR= (a prepared kernel tree, e.g. 5.15 or 6.6): that tree's version.
KVER ?= $(if $(KDIR),$(shell bash -c '. $(TOP)/scripts/lib.sh && kernel_version "$$1"' _ $(call q,$(KDIR)) 2>/dev/null),$(shell $(TOP)/scripts/pick-kernel.sh --installed 2>/dev/null))
# SRC (or KSRC): a kernel source to import (tarball, unpacked tree or git tree).
KSRC ?=
SRC ?= $(KSRC)
DRIVERS ?= veth mana

.PHONY: all help build modules import fit prepare-tree vm-kernel probe probe-report drift series install uninstall \
	dkms-source dkms-build dkms-clean deb check check-quick check-debug bench matrix export deps clean distclean

all: build

help:
	@echo 'bqlkit targets:'
	@echo '  make install        build + install for the running kernel (or the distro default'
	@echo '                      kernel when the running one has no headers) with DKMS, and for'
	@echo '                      every other kernel with headers of a series the kit carries;'
	@echo '                      KVER=<kver>: that kernel only.  Installs what it needs (dkms,'
	@echo '                      quilt, headers, linux-source-X.Y) with apt, regenerates the'
	@echo '                      initramfs where it holds veth/mana, says how to enroll the'
	@echo '                      DKMS signing key when Secure Boot is on'
	@echo '  make uninstall      remove the kit from DKMS (all kernels); the in-tree modules return'
	@echo '  make check          the test suite (installs its dependencies; VM tests need ~5 min;'
	@echo '                      the Debian chroot tests t90/t95 ~12 min, the first run builds'
	@echo '                      the chroot: ~750 MB download, ~700 MB in BQLKIT_CACHE)'
	@echo '  make check-quick    the suite without the VM, chroot and DKMS-install tests'
	@echo '                      (TESTS="t90 t95" runs a subset; BQLKIT_QUICK=1 is check-quick)'
	@echo '  make check-debug    the veth VM tests (t60 t70 t75 t76 t77) on KASAN+lockdep and KCSAN'
	@echo '                      kernels built from linux-source-6.12 (first run ~50 min: the two'
	@echo '                      kernels, cached in $$BQLKIT_CACHE/debug), then t79: no report'
	@echo '                      naming the kit; DEBUG_SERIES="6.12 6.1" DEBUG_FLAVOURS="kasan kcsan"'
	@echo '  make deb            build/deb/bqlkit-dkms_VERSION_all.deb (debhelper + dh-dkms): the kit'
	@echo '                      and the imported bases; install it with apt install ./<deb>'
	@echo '                      DEB_VERSION=<ver> packages the kit as another version'
	@echo '  make bench          stock vs kit veth under QEMU (the kit'"'"'s, scripts/build-qemu.sh): guest'
	@echo '                      instructions per packet (insncount TCG plugin), latency under load, pps, DQL limit'
	@echo '                      (not pass/fail) -> results/bench-KVER.json, bench.md, bench.png'
	@echo '                      per boot: cost floods (fixed count, unslowed), then slowed-receiver floods'
	@echo '                      (tsprobe one-way delay, ping RTT); the kit boot sets ethtool -C tx-usecs before each flood'
	@echo '                      BENCH_RUNS=4 (VM boots per kernel and variant; medians over them)'
	@echo '                      BENCH_KERNELS="<kver or chroot row: trixie-6.12 sid-7.2 trixie-bpo-7.3> ..."'
	@echo '                      (default: the test kernels)  BENCH_SOCKETS=4'
	@echo '                      BENCH_MODE=icount (guest time = instructions; mttcg: host time, as the older benches)'
	@echo '                      BENCH_ICOUNT=shift=2,sleep=off,align=off  BENCH_PROFILE=1 (per-address profiles:'
	@echo '                      scripts/insncount.py profile, per function; annotate, per instruction)'
	@echo '                      BENCH_QDISC=root (fq_codel as vethA'"'"'s root qdisc; mq: mq with fq_codel per tx queue)'
	@echo '                      BENCH_LIMIT_MAX=N (kit boots: DQL limit capped at N packets before each flood;'
	@echo '                      veth shows byte_queue_limits before 6.9 only; unset: DQL'"'"'s own limit)'
	@echo '                      BENCH_PIN_HARNESS=1 (the guest'"'"'s bench shell, sink, probes and samplers on vCPU 0,'
	@echo '                      leaving vCPU 1 to vethB'"'"'s NAPI thread; default 0: the guest'"'"'s scheduler places them)'
	@echo '                      BENCH_TRACE_MS=N (N ms of kernel events per timed flood; scripts/trace-report.py)'
	@echo '                      BENCH_TURN_US=20 (icount, timed floods: guest us per vCPU turn at most; 0 = QEMU'"'"'s own)'
	@echo '                      BENCH_COST_COUNT=100000  BENCH_COST_PAYLOADS=64 (none = skip)  BENCH_COST_TX_USECS=def,100'
	@echo '                      BENCH_SPLIT=1 (also cost floods with the receive path on its own vCPU)'
	@echo '                      BENCH_SLOW=100 (receiver slowdown: ingress u32 filters)  BENCH_SECS=4 (s per slowed flood)'
	@echo '                      BENCH_TX_USECS=def,100,500 (kit tx-usecs of the slowed floods; def = default (0: per packet), 100 = upstream'"'"'s)'
	@echo '                      BENCH_PAYLOADS=64,1472 (slowed, at def only, or the first setting)'
	@echo '                      BENCH_SWEEP_PAYLOADS=64 (slowed, at every BENCH_TX_USECS setting; none = no sweep)'
	@echo '                      BENCH_UNSLOWED_PAYLOADS=none (64: timed unslowed floods, as older benches)'
	@echo '                      BENCH_UNSLOWED_TX_USECS=def,100  BENCH_UNSLOWED_SECS=4'
	@echo '                      BENCH_REPORT_ONLY=1 (redo json/md/png from results/*.log)'
	@echo '  make bench DRIVER=mana  stock vs kit mana on the emulated MANA VF (QEMU TCG), wire rate-limited:'
	@echo '                      TCP request/response p50/p99 and ping beside TCP streams or a UDP flood, wire'
	@echo '                      throughput, BQL limit, doorbells per packet; instructions per packet (not pass/fail)'
	@echo '                      -> results/bench-mana-KVER.json, bench-mana.md, bench-mana.png'
	@echo '                      BENCH_KERNELS="<kver or chroot row: trixie-6.12 sid-7.2 trixie-bpo-7.3> ..."'
	@echo '                      BENCH_RUNS=3  BENCH_RATE=20 (Mbit/s)  BENCH_QUEUES=1,2  BENCH_LOADS=tcp,udp'
	@echo '                      BENCH_FLOWS=8  BENCH_SECS=8  BENCH_SMP=2  BENCH_REPORT_ONLY=1'
	@echo '                      BENCH_LATENCY=1 (0: no latency boots; the report keeps the last ones)'
	@echo '                      BENCH_COST_COUNT=50000 (0: none): cost boots under -icount with the insncount'
	@echo '                      plugin, guest instructions and doorbells per datagram, stock vs kit'
	@echo '                      BENCH_COST_REPS=2 (floods per boot and queue count)  BENCH_COST_PAYLOAD=64'
	@echo '                      BENCH_COST_QUEUES=1 (queue counts of the cost floods)'
	@echo '                      BENCH_ICOUNT=shift=2,sleep=off,align=off'
	@echo '  make matrix         every driver x every kernel of scripts/matrix.conf (bookworm incl.'
	@echo '                      cloud/rt, arm64/armhf cross, trixie, trixie-backports 7.3, sid 7.2,'
	@echo '                      bullseye 5.10 in cached chroots) -> results/matrix.md and .json;'
	@echo '                      MATRIX_JOBS=2 cells at a time; MATRIX_FILTER=<regex of kernel ids>'
	@echo '                      MATRIX_TREES="<tree> ..." prepared 5.15/6.6 trees (rows tree-5.15,'
	@echo '                      tree-6.6; else $$BQLKIT_CACHE/trees/linux-X.Y.*; none: "not in CI")'
	@echo '  make export BASE=X.Y [DRIVER=veth]  mail-formatted patches for git am on a tree of'
	@echo '                      that base, compat folded in -> build/export/X.Y/<driver>/ (every driver'
	@echo '                      with a non-empty series; From: the upstream author, Signed-off-by:'
	@echo '                      SIGNOFF="Name <email>" or git config user.name/user.email)'
	@echo '  make fit SRC=…      per driver and change: applied / adapted (3-way merge, which hunks) /'
	@echo '                      already present (which rule) / does not fit (hunk, function, why), and a'
	@echo '                      verdict per driver; KDIR=<prepared tree or headers> also builds it'
	@echo '                      (SRC: a tarball, a tree, a git tree, or a tests/fixtures/kernels/ entry)'
	@echo '                      SRCVER=X.Y.Z: the release of a SRC of driver files without a top Makefile'
	@echo '  make build          build for KVER into build/KVER/ (headers must be installed)'
	@echo '  make import SRC=…   import driver sources from a kernel source into build/bases/X.Y'
	@echo '                      (KSRC= is the same; a tarball, an unpacked tree or a git tree)'
	@echo '  make prepare-tree TREE=…  make a kernel tree buildable against (5.15/6.6 LTS, vendor'
	@echo '                      trees: no headers package): defconfig + the kit drivers unless it'
	@echo '                      has a .config, modules_prepare, the in-tree ABI for check-abi;'
	@echo '                      then: make import SRC=TREE; make build KDIR=TREE'
	@echo '  make vm-kernel TREE=… OUT=…  a small bootable x86_64 kernel from a clean tree (O=OUT,'
	@echo '                      ~10 min) for the VM tests of 5.15/6.6 (tests/t64); VM_CONFIG= adds'
	@echo '                      scripts/config arguments a tree needs; with'
	@echo '                      VM_CONFIG="-e HYPERV -e PCI_HYPERV -m MICROSOFT_MANA -m DUMMY" t82 runs mana on it'
	@echo '  make probe          run the compat probes for KVER; make probe-report prints them'
	@echo '                      next to what the version predicts ("backport detected")'
	@echo '  make drift          apply every series to its imported base; fail on fuzz or offsets'
	@echo '  make series         write patches/<driver>/<X.Y>/ from changes/ (one copy of each change)'
	@echo '  make dkms-source    write the DKMS source tree to DESTDIR (default /usr/src/bqlkit-VERSION)'
	@echo '  make dkms-build     (run by DKMS) build for KVER into out/; make dkms-clean removes it'
	@echo '  make deps           install build dependencies with apt'
	@echo '  make clean          remove build/ (imported bases are kept: make distclean drops them)'
	@echo '  make modules        the same as make build; make all too'
	@echo 'variables:'
	@echo '  KVER='$(call q,$(KVER))'  KDIR=<headers dir, default /lib/modules/KVER/build>'
	@echo '  SRC=<kernel source to import>  DRIVERS='$(call q,$(DRIVERS))'  STRICT=1 (refuse a source of another'
	@echo '  sublevel than the kernel; another series is always refused; a tree: always refused)'
	@echo '  FORCE=1 (make import/prepare-tree of a release the kit has no series for)'
	@echo '  BQLKIT_CACHE='$(call q,$(BQLKIT_CACHE))' (downloads: kernel images, chroots)'
	@echo '  DESTDIR=<dir> (make dkms-source)  DEB_VERSION=<ver> (make deb)  GIT_REV=<rev> (import from git)'
	@echo '  BQLKIT_NO_INITRAMFS=1 (install/uninstall: leave the initramfs alone)'
	@echo '  BQLKIT_CHROOT_MAX_DAYS=14 (rebuild the test chroot when older)'
	@echo '  BQLKIT_UPDATE_EXPECTED=1 (t90: rewrite tests/expected/*.txt from this run; review the diff)'

# (build.sh says what is wrong with KDIR= or KVER=, an empty KVER too.)
build modules:
	BQLKIT_DRIVERS=$(call q,$(DRIVERS)) $(TOP)/scripts/build.sh $(call q,$(KVER))

import:
	@test -n $(call q,$(SRC)) || { echo 'bqlkit: error: give SRC=<linux-source tarball, tree or git tree>' >&2; exit 1; }
	BQLKIT_DRIVERS=$(call q,$(DRIVERS)) $(TOP)/scripts/import-source.sh $(call q,$(SRC))

fit:
	@test -n $(call q,$(SRC)) || { echo 'bqlkit: error: give SRC=<kernel source, tree or git tree>' >&2; exit 1; }
	BQLKIT_DRIVERS=$(call q,$(DRIVERS) mvneta) BQLKIT_SRCVER=$(call q,$(SRCVER)) $(TOP)/scripts/fit-source.sh $(call q,$(SRC)) $(if $(KDIR),$(call q,$(KDIR)))

prepare-tree:
	@test -n $(call q,$(TREE)) || { echo 'bqlkit: error: give TREE=<unpacked kernel tree>' >&2; exit 1; }
	$(TOP)/scripts/prepare-tree.sh $(call q,$(TREE))

vm-kernel:
	@test -n $(call q,$(TREE)) && test -n $(call q,$(OUT)) || { echo 'bqlkit: error: give TREE=<clean kernel tree> OUT=<build dir>' >&2; exit 1; }
	$(TOP)/scripts/build-vm-kernel.sh $(call q,$(TREE)) $(call q,$(OUT))

probe:
	k=$(call q,$(KVER)) && bash -c '. $(TOP)/scripts/lib.sh && valid_kver "$$1"' _ "$$k" && \
		$(TOP)/scripts/probe.sh "$${KDIR:-/lib/modules/$$k/build}" "$(TOP)/build/$$k/compat"

probe-report: probe
	k=$(call q,$(KVER)) && $(TOP)/scripts/probe-report.sh "$${KDIR:-/lib/modules/$$k/build}" "$(TOP)/build/$$k/compat"

drift:
	$(TOP)/scripts/check-drift.sh

series:
	$(TOP)/scripts/gen-series.sh

install:
	$(TOP)/scripts/install.sh $(if $(filter command line,$(origin KVER)),$(call q,$(KVER)))

uninstall:
	$(TOP)/scripts/uninstall.sh

dkms-source:
	$(TOP)/scripts/make-dkms-source.sh $(if $(DESTDIR),$(call q,$(DESTDIR)))

# Run by DKMS inside its build directory (see dkms.conf).
dkms-build:
	BQLKIT_BUILD=$(TOP)/build $(TOP)/scripts/dkms-build.sh $(call q,$(KVER))

dkms-clean:
	rm -rf $(TOP)/build $(TOP)/out

deb:
	$(if $(DEB_VERSION),DEB_VERSION=$(call q,$(DEB_VERSION))) $(TOP)/scripts/make-deb.sh

deps:
	$(TOP)/scripts/install-deps.sh build

check:
	$(TOP)/tests/run.sh

check-quick:
	BQLKIT_QUICK=1 $(TOP)/tests/run.sh

check-debug:
	$(if $(DEBUG_SERIES),DEBUG_SERIES=$(call q,$(DEBUG_SERIES))) $(if $(DEBUG_FLAVOURS),DEBUG_FLAVOURS=$(call q,$(DEBUG_FLAVOURS))) \
		$(TOP)/tests/check-debug.sh

# Environment BENCH_* reaches scripts/bench.sh (bench-mana.sh with DRIVER=mana) as is (make VAR=... exports it too);
# one given empty (BENCH_RUNS=) is refused there.
BENCH_KNOBS := BENCH_RUNS BENCH_SLOW BENCH_KERNELS BENCH_PAYLOADS BENCH_SECS BENCH_SOCKETS BENCH_TX_USECS \
	BENCH_SWEEP_PAYLOADS BENCH_UNSLOWED_PAYLOADS BENCH_UNSLOWED_TX_USECS BENCH_UNSLOWED_SECS \
	BENCH_MODE BENCH_ICOUNT BENCH_TURN_US BENCH_COST_COUNT BENCH_COST_PAYLOADS BENCH_COST_TX_USECS BENCH_SPLIT BENCH_PROFILE BENCH_TRACE_MS BENCH_QDISC BENCH_LIMIT_MAX BENCH_PIN_HARNESS \
	BENCH_RATE BENCH_QUEUES BENCH_LOADS BENCH_FLOWS BENCH_SMP BENCH_LATENCY BENCH_COST_REPS BENCH_COST_PAYLOAD \
	BENCH_COST_QUEUES
BENCH_SCRIPT = $(if $(filter mana,$(DRIVER)),bench-mana.sh,bench.sh)
bench:
	@case $(call q,$(DRIVER)) in ''|veth|mana) ;; *) echo 'bqlkit: error: make bench benches veth (the default) or mana: DRIVER='$(call q,$(DRIVER))' is neither' >&2; exit 1 ;; esac
	BENCH_COMMAND=$(call q,$(strip make bench $(if $(DRIVER),DRIVER=$(DRIVER)) $(foreach v,$(BENCH_KNOBS),$(if $(filter command line,$(origin $(v))),$(v)=$(if $(word 2,$($(v))),'$($(v))',$($(v))))))) \
		$(foreach v,$(BENCH_KNOBS) BENCH_REPORT_ONLY,$(if $($(v)),$(v)=$(call q,$($(v))))) \
		$(TOP)/scripts/$(BENCH_SCRIPT)

clean:
	rm -rf $(filter-out $(TOP)/build/bases,$(wildcard $(TOP)/build/*)) $(TOP)/out

distclean:
	rm -rf $(TOP)/build $(TOP)/out

matrix:
	$(TOP)/scripts/matrix.sh $(call q,$(or $(MATRIX_FILTER),.))

export:
	@test -n $(call q,$(BASE)) || { echo 'bqlkit: error: give BASE=<series>, e.g. make export BASE=6.1' >&2; exit 1; }
	$(TOP)/scripts/export-series.sh $(call q,$(BASE)) $(if $(DRIVER),$(call q,$(DRIVER)))
