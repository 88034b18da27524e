# bqlkit: BQL backports for LTS/distro kernels as DKMS modules and quilt series.
# `make help` lists every target and variable along the pipeline; `make help-bench`
# the bench's knobs.

SHELL := /bin/bash
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
# BQLKIT_CACHE and DRIVERS have no default here: the scripts default them
# (scripts/lib.sh, the one place); lib_default VAR says what it gives
# BQLKIT_VAR, for make help.
lib_default = $(shell bash -c '. $(TOP)/scripts/lib.sh && echo "$$BQLKIT_$(1)"' 2>/dev/null)

# q: a value the user gave, single-quoted for the recipe's shell, so that
# no value (KVER='6.1;cmd', a path with spaces) becomes shell text.
q = '$(subst ','\'',$(1))'

# literal VAR...: each VAR the user gave (command line or environment) is
# taken as written: make does not expand "$(shell ...)" in it (the scripts
# then check the value and refuse it with one line).
# (given_on_command_line VAR: VAR was given on make's command line; its
# origin is "override" from here on.)
literal = $(foreach v,$(1),$(if $(filter command% environment%,$(origin $(v))),\
	$(if $(filter command%,$(origin $(v))),$(eval COMMAND_LINE_VARS += $(v)))\
	$(eval export override $(v) := $$(value $(v)))))
given_on_command_line = $(filter $(1),$(COMMAND_LINE_VARS))
$(call literal,KVER KDIR KSRC SRC SRCVER TREE OUT DRIVERS DRIVER BASE DESTDIR DEB_VERSION MATRIX_FILTER \
	DEBUG_SERIES DEBUG_FLAVOURS MUTANTS BQLKIT_CACHE GIT_REV STRICT)

# KVER: the kernel to build for; default: the running kernel if its headers
# are installed, else the distro's default kernel (scripts/pick-kernel.sh).
# With KDIR= (a prepared kernel tree, e.g. 5.15 or 6.6): that tree's version.
KVER ?= $(if $(KDIR),$(shell bash -c '. $(TOP)/scripts/lib.sh && kernel_version "$$1"' _ $(call q,$(KDIR)) 2>/dev/null),$(shell $(TOP)/scripts/pick-kernel.sh --installed 2>/dev/null))
# SRC (or KSRC): a kernel source to import (tarball, unpacked tree or git tree).
KSRC ?=
SRC ?= $(KSRC)
# DRIVERS: the drivers to build, import or fit.  drivers_env LIST: the
# recipe's BQLKIT_DRIVERS=LIST where DRIVERS is given; else nothing, and the
# scripts take every driver the kit carries.
drivers_env = $(if $(DRIVERS),BQLKIT_DRIVERS=$(call q,$(1)))

.PHONY: all help help-bench bench-scale build modules import fit prepare-tree vm-kernel probe probe-report drift series install uninstall \
	dkms-source dkms-build dkms-clean deb rpm check check-quick check-debug mutants support-table bench matrix export deps clean distclean

all: build

help:
	@echo 'bqlkit: make TARGET [VAR=value ...]; the pipeline, then the laboratory (README.md, docs/)'
	@echo 'import   make import SRC=<tarball|tree|git tree>  driver sources -> build/bases/X.Y (or KSRC=)'
	@echo '         make prepare-tree TREE=<dir>  a 5.15/6.6/vendor tree, made buildable against'
	@echo '         make vm-kernel TREE=<dir> OUT=<dir>  a small bootable x86_64 kernel for the VM tests'
	@echo '         (VM_CONFIG= adds scripts/config arguments a tree needs)'
	@echo 'fit      make fit SRC=<source> [KDIR=<tree>] [SRCVER=X.Y.Z]  per change: applied / adapted /'
	@echo '         already present / does not fit, and a verdict per driver; KDIR= also builds it'
	@echo '         make series  write patches/<driver>/<X.Y>/ from changes/ (each change once);'
	@echo '         make drift  apply every series to its imported base; fail on fuzz or offsets'
	@echo 'build    make build  build for KVER into build/KVER/ (make modules, make all: the same)'
	@echo '         make probe  the compat probes for KVER; make probe-report: beside the version'"'"'s guess'
	@echo 'install  make install [SRC=<its source>]  build + install with DKMS for the running (or default)'
	@echo '         kernel and every other kernel with headers of a carried series (KVER=: that one only;'
	@echo '         SRC=: that one, any distro, no apt); apt installs what it needs; says how to enroll the key'
	@echo '         make uninstall  remove the kit from DKMS (all kernels); the in-tree modules return'
	@echo '         make deb  build/deb/bqlkit-dkms_VERSION_all.deb (DEB_VERSION=); apt install ./<deb>'
	@echo '         make rpm  build/rpm/bqlkit-dkms-VERSION-1.noarch.rpm (rpmbuild; untried on an RPM distro)'
	@echo '         make dkms-source  DESTDIR=/usr/src/bqlkit-VERSION; make dkms-build, make dkms-clean: DKMS'"'"'s'
	@echo 'export   make export BASE=X.Y [DRIVER=veth]  git am patches for a vendor tree, compat folded'
	@echo '         in -> build/export/X.Y/<driver>/ (SIGNOFF="Name <email>", else git config)'
	@echo 'test     make check  the suite; ends "N passed, N failed, N skipped" (TESTS="t44 t90": a subset)'
	@echo '         make check-quick  without the VM, chroot and DKMS-install tests (BQLKIT_QUICK=1)'
	@echo '         make check-debug  veth VM tests on KASAN+lockdep and KCSAN kernels, planted faults (t78), then t79'
	@echo '         (DEBUG_SERIES="6.12 6.1" DEBUG_FLAVOURS="kasan kcsan")'
	@echo '         make mutants  VM checks vs modules with a property broken -> results/mutants-<series>.md (~46 min on 6.1)'
	@echo '         make support-table  README'"'"'s support table from results/matrix.json and the fit corpus'
	@echo 'matrix   make matrix  every driver x every kernel of lab/matrix.conf -> results/matrix.md,'
	@echo '         .json (MATRIX_JOBS=2, MATRIX_FILTER=<regex of row ids>, MATRIX_TREES="<tree> ...")'
	@echo 'bench    make bench [DRIVER=mana]  stock vs kit under QEMU -> results/bench*.json, .md, .png'
	@echo '         (not pass/fail); make bench-scale: over queues x flows; make help-bench: their knobs'
	@echo 'other    make deps (build dependencies with apt), make clean (build/ but the imported bases),'
	@echo '         make distclean (build/ whole), make help (this)'
	@echo 'variables:'
	@echo '  KVER='$(call q,$(KVER))'  KDIR=<headers dir, default /lib/modules/KVER/build>'
	@echo '  DRIVERS='$(call q,$(or $(DRIVERS),$(call lib_default,DRIVERS)))'  BQLKIT_CACHE='$(call q,$(or $(BQLKIT_CACHE),$(call lib_default,CACHE)))' (downloads: kernel images, chroots)'
	@echo '  STRICT=1 (refuse a source of another sublevel than the kernel; another series always is)'
	@echo '  FORCE=1 (import/prepare-tree a release the kit has no series for)  GIT_REV=<rev> (import from git)'
	@echo '  BQLKIT_NO_INITRAMFS=1 (install/uninstall: leave the initramfs alone)'
	@echo '  BQLKIT_CHROOT_MAX_DAYS=14 (rebuild the test chroot when older)'
	@echo '  BQLKIT_UPDATE_EXPECTED=1 (t90: rewrite tests/expected/*.txt from this run; review the diff)'

# The bench's knobs, apart from make help: BENCH_KNOBS below is their inventory.
help-bench:
	@echo '  make bench          stock vs kit veth under QEMU (the kit'"'"'s, lab/build-qemu.sh): guest'
	@echo '                      instructions per packet (insncount TCG plugin), latency under load, pps, DQL limit'
	@echo '                      (not pass/fail) -> results/bench-KVER.json, bench.md, bench.png'
	@echo '                      per boot: cost floods (fixed count, unslowed), then slowed-receiver floods'
	@echo '                      (tsprobe one-way delay, ping RTT); the kit boot sets ethtool -C tx-usecs before each flood'
	@echo '                      BENCH_RUNS=4 (VM boots per kernel and variant; medians over them)'
	@echo '                      BENCH_KERNELS="<kver or chroot row: trixie-6.12 sid-7.2 trixie-bpo-7.3> ..."'
	@echo '                      (default: the test kernels)  BENCH_SOCKETS=4 (sender sockets, 1..64)'
	@echo '                      BENCH_QUEUES=N (tx and rx queues of each veth end; default veth'"'"'s: one per vCPU)'
	@echo '                      BENCH_MODE=icount (guest time = instructions; mttcg: host time, as the older benches)'
	@echo '                      BENCH_ICOUNT=shift=2,sleep=off,align=off  BENCH_PROFILE=1 (per-address profiles:'
	@echo '                      lab/insncount.py profile, per function; annotate, per instruction)'
	@echo '                      BENCH_QDISC=root (fq_codel as vethA'"'"'s root qdisc; mq: mq with fq_codel per tx queue)'
	@echo '                      BENCH_LIMIT_MAX=N (kit boots: DQL limit capped at N packets before each flood;'
	@echo '                      veth shows byte_queue_limits before 6.9 only; unset: DQL'"'"'s own limit)'
	@echo '                      BENCH_PIN_HARNESS=1 (the guest'"'"'s bench shell, sink, probes and samplers on vCPU 0,'
	@echo '                      leaving vCPU 1 to vethB'"'"'s NAPI thread; default 0: the guest'"'"'s scheduler places them)'
	@echo '                      BENCH_TRACE_MS=N (N ms of kernel events per timed flood; lab/trace-report.py)'
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
	@echo '                      BENCH_MODE=icount (latency boots: guest time = instructions, vCPU turns of'
	@echo '                      BENCH_TURN_US=20 us; mttcg: multi-threaded TCG, host time, as the older results)'
	@echo '                      BENCH_GSO_MAX=16384 (A'"'"'s gso_max_size, both variants; 0: the kernel'"'"'s 65536)'
	@echo '                      BENCH_MIN_TSO_SEGS=12 (A'"'"'s tcp_min_tso_segs, both variants: every TSO packet the largest; 0: the kernel'"'"'s)'
	@echo '                      BENCH_TX_RING=1024 (A'"'"'s TX ring in WQEs, ethtool -G, both variants; 0: the driver'"'"'s 256, and for a mana without -G: 5.15)'
	@echo '                      BENCH_COST_COUNT=50000 (0: none): cost boots under -icount with the insncount'
	@echo '                      plugin, guest instructions and doorbells per datagram, stock vs kit'
	@echo '                      BENCH_COST_REPS=2 (floods per boot and queue count)  BENCH_COST_PAYLOAD=64'
	@echo '                      BENCH_COST_QUEUES=1 (queue counts of the cost floods)'
	@echo '                      BENCH_COST_GSO=0 (N: each send a UDP GSO write of N datagrams, so that the'
	@echo '                      receiver'"'"'s NAPI polls find N frames each: the RX doorbell batching'"'"'s case)'
	@echo '                      BENCH_MANA_BATCHING=0 (1: the kit'"'"'s opt-in SQ doorbell batching on)'
	@echo '                      BENCH_ICOUNT=shift=2,sleep=off,align=off'
	@echo '  make bench-scale     veth and mana, stock vs kit, per point of queues x flows (lab/bench-scale.sh):'
	@echo '                      cost kit/stock, p50/p99 stock/kit, noise floors -> results/bench-scale/scaling.{md,json,png}'
	@echo '                      DRIVER=veth|mana (both)  SCALE_QUEUES=1,2,4,8  SCALE_FLOWS=1,4,16,64'
	@echo '                      BENCH_KERNELS=trixie-6.12 (one)  BENCH_RUNS=2  SCALE_REPORT_ONLY=1 (redo the summary)'
	@echo '                      SCALE_COST_COUNT=20000 (veth cost flood)  SCALE_SECS=4 (mana probed seconds)'

# (build.sh says what is wrong with KDIR= or KVER=, an empty KVER too.)
build modules:
	$(call drivers_env,$(DRIVERS)) $(TOP)/scripts/build.sh $(call q,$(KVER))

import:
	@test -n $(call q,$(SRC)) || { echo 'bqlkit: error: give SRC=<linux-source tarball, tree or git tree>' >&2; exit 1; }
	$(call drivers_env,$(DRIVERS)) $(TOP)/scripts/import-source.sh $(call q,$(SRC))

# (make fit audits mvneta whatever DRIVERS says: its series are empty.)
fit:
	@test -n $(call q,$(SRC)) || { echo 'bqlkit: error: give SRC=<kernel source, tree or git tree>' >&2; exit 1; }
	$(call drivers_env,$(strip $(DRIVERS) $(filter-out $(DRIVERS),mvneta))) BQLKIT_SRCVER=$(call q,$(SRCVER)) $(TOP)/scripts/fit-source.sh $(call q,$(SRC)) $(if $(KDIR),$(call q,$(KDIR)))

prepare-tree:
	@test -n $(call q,$(TREE)) || { echo 'bqlkit: error: give TREE=<unpacked kernel tree>' >&2; exit 1; }
	$(TOP)/scripts/prepare-tree.sh $(call q,$(TREE))

vm-kernel:
	@test -n $(call q,$(TREE)) && test -n $(call q,$(OUT)) || { echo 'bqlkit: error: give TREE=<clean kernel tree> OUT=<build dir>' >&2; exit 1; }
	$(TOP)/lab/build-vm-kernel.sh $(call q,$(TREE)) $(call q,$(OUT))

probe:
	k=$(call q,$(KVER)) && bash -c '. $(TOP)/scripts/lib.sh && valid_kver "$$1"' _ "$$k" && \
		$(TOP)/scripts/probe.sh "$${KDIR:-/lib/modules/$$k/build}" "$(TOP)/build/$$k/compat"

probe-report: probe
	k=$(call q,$(KVER)) && $(TOP)/scripts/probe-report.sh "$${KDIR:-/lib/modules/$$k/build}" "$(TOP)/build/$$k/compat"

drift:
	$(TOP)/scripts/check-drift.sh

series:
	$(TOP)/scripts/gen-series.sh

# install SRC= (or KSRC=): from the command line only (an SRC in the
# environment is no source to install from); SRCVER=, SRC_ANY_VERSION=1 with it.
install_src = $(if $(call given_on_command_line,SRC),$(SRC),$(if $(call given_on_command_line,KSRC),$(KSRC)))
# (SRC= and SRCVER= reach install.sh in its environment: its command line,
# as make prints it, stays the script and KVER.)
install: export BQLKIT_SRC = $(install_src)
install: export BQLKIT_SRCVER = $(if $(install_src),$(SRCVER))
install:
	$(TOP)/scripts/install.sh $(if $(call given_on_command_line,KVER),$(call q,$(KVER)))

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

rpm:
	$(TOP)/scripts/make-rpm.sh

deps:
	$(TOP)/scripts/install-deps.sh build

check:
	$(TOP)/tests/run.sh

check-quick:
	BQLKIT_QUICK=1 $(TOP)/tests/run.sh

# Not in make check: one VM boot per mutant (docs/testing.md).  KVER= given
# on the command line: that kernel, else the first test kernel.
mutants:
	$(TOP)/lab/mutants.sh $(if $(call given_on_command_line,KVER),--kver $(call q,$(KVER))) $(foreach m,$(MUTANTS),$(call q,$(m)))

check-debug:
	$(if $(DEBUG_SERIES),DEBUG_SERIES=$(call q,$(DEBUG_SERIES))) $(if $(DEBUG_FLAVOURS),DEBUG_FLAVOURS=$(call q,$(DEBUG_FLAVOURS))) \
		$(TOP)/tests/check-debug.sh

# README's support table, between its support-table markers; tests/t04 fails
# when the committed one differs.
support-table:
	python3 $(TOP)/lab/support-table.py --write $(TOP)/README.md

# Environment BENCH_* reaches lab/bench.sh (bench-mana.sh with DRIVER=mana) as is (make VAR=... exports it too);
# one given empty (BENCH_RUNS=) is refused there.
BENCH_KNOBS := BENCH_RUNS BENCH_SLOW BENCH_KERNELS BENCH_PAYLOADS BENCH_SECS BENCH_SOCKETS BENCH_TX_USECS \
	BENCH_SWEEP_PAYLOADS BENCH_UNSLOWED_PAYLOADS BENCH_UNSLOWED_TX_USECS BENCH_UNSLOWED_SECS \
	BENCH_MODE BENCH_ICOUNT BENCH_TURN_US BENCH_COST_COUNT BENCH_COST_PAYLOADS BENCH_COST_TX_USECS BENCH_SPLIT BENCH_PROFILE BENCH_TRACE_MS BENCH_QDISC BENCH_LIMIT_MAX BENCH_PIN_HARNESS \
	BENCH_RATE BENCH_QUEUES BENCH_LOADS BENCH_FLOWS BENCH_SMP BENCH_LATENCY BENCH_COST_REPS BENCH_COST_PAYLOAD \
	BENCH_COST_QUEUES BENCH_COST_GSO BENCH_MANA_BATCHING BENCH_GSO_MAX BENCH_MIN_TSO_SEGS BENCH_TX_RING
$(call literal,$(BENCH_KNOBS) BENCH_REPORT_ONLY)
BENCH_SCRIPT = $(if $(filter mana,$(DRIVER)),bench-mana.sh,bench.sh)
bench:
	@case $(call q,$(DRIVER)) in ''|veth|mana) ;; *) echo 'bqlkit: error: make bench benches veth (the default) or mana: DRIVER='$(call q,$(DRIVER))' is neither' >&2; exit 1 ;; esac
	BENCH_COMMAND=$(call q,$(strip make bench $(if $(DRIVER),DRIVER=$(DRIVER)) $(foreach v,$(BENCH_KNOBS),$(if $(call given_on_command_line,$(v)),$(v)=$(if $(word 2,$($(v))),'$($(v))',$($(v))))))) \
		$(foreach v,$(BENCH_KNOBS) BENCH_REPORT_ONLY,$(if $($(v)),$(v)=$(call q,$($(v))))) \
		$(TOP)/lab/$(BENCH_SCRIPT)

SCALE_KNOBS := SCALE_QUEUES SCALE_FLOWS SCALE_COST_COUNT SCALE_SECS SCALE_REPORT_ONLY
$(call literal,$(SCALE_KNOBS))
bench-scale:
	@case $(call q,$(DRIVER)) in ''|both|veth|mana) ;; *) echo 'bqlkit: error: make bench-scale benches veth, mana or both (the default): DRIVER='$(call q,$(DRIVER))' is none of them' >&2; exit 1 ;; esac
	BENCH_COMMAND=$(call q,$(strip make bench-scale $(if $(DRIVER),DRIVER=$(DRIVER)) $(foreach v,$(SCALE_KNOBS) BENCH_KERNELS BENCH_RUNS,$(if $(call given_on_command_line,$(v)),$(v)=$($(v)))))) \
		$(foreach v,$(SCALE_KNOBS) $(BENCH_KNOBS),$(if $($(v)),$(v)=$(call q,$($(v))))) \
		$(if $(DRIVER),DRIVER=$(call q,$(DRIVER))) $(TOP)/lab/bench-scale.sh

clean:
	rm -rf $(filter-out $(TOP)/build/bases,$(wildcard $(TOP)/build/*)) $(TOP)/out

distclean:
	rm -rf $(TOP)/build $(TOP)/out

matrix:
	$(TOP)/lab/matrix.sh $(call q,$(or $(MATRIX_FILTER),.))

export:
	@test -n $(call q,$(BASE)) || { echo 'bqlkit: error: give BASE=<series>, e.g. make export BASE=6.1' >&2; exit 1; }
	$(TOP)/scripts/export-series.sh $(call q,$(BASE)) $(if $(DRIVER),$(call q,$(DRIVER)))
