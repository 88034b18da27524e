# bqlkit: BQL backports for LTS/distro kernels as DKMS modules and quilt series.
# `make help` lists every target and variable.

SHELL := /bin/bash
TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
export BQLKIT_CACHE ?= /var/cache/bqlkit

# KVER: the kernel to build for; default: the running kernel if its headers
# are installed, else the distro's default kernel (scripts/pick-kernel.sh).
KVER ?= $(shell $(TOP)/scripts/pick-kernel.sh --installed 2>/dev/null)
# SRC: a kernel source to import (tarball, unpacked tree or git tree).
SRC ?=
DRIVERS ?= veth

.PHONY: all help build modules import probe probe-report drift install uninstall \
	dkms-source dkms-build dkms-clean check check-quick deps clean distclean

all: build

help:
	@echo 'bqlkit targets:'
	@echo '  make install        build + install for the running kernel (or the distro default'
	@echo '                      kernel when the running one has no headers) with DKMS; installs'
	@echo '                      what it needs (dkms, quilt, headers, linux-source-X.Y) with apt'
	@echo '  make uninstall      remove the kit from DKMS (all kernels); the in-tree modules return'
	@echo '  make check          the test suite (installs its dependencies; VM tests need ~5 min)'
	@echo '  make check-quick    the suite without the VM and DKMS-install tests'
	@echo '  make build          build for KVER into build/KVER/ (headers must be installed)'
	@echo '  make import SRC=…   import driver sources from a kernel source into build/bases/X.Y'
	@echo '  make probe          run the compat probes for KVER; make probe-report prints them'
	@echo '                      next to what the version predicts ("backport detected")'
	@echo '  make drift          apply every series to its imported base; fail on fuzz or offsets'
	@echo '  make dkms-source    write the DKMS source tree to DESTDIR (default /usr/src/bqlkit-VERSION)'
	@echo '  make dkms-build     (run by DKMS) build for KVER into out/'
	@echo '  make deps           install build dependencies with apt'
	@echo '  make clean          remove build/ (imported bases are kept: make distclean drops them)'
	@echo 'variables:'
	@echo '  KVER=$(KVER)  KDIR=<headers dir, default /lib/modules/KVER/build>'
	@echo '  SRC=<kernel source to import>  DRIVERS=$(DRIVERS)  STRICT=1 (source must match the kernel exactly)'
	@echo '  BQLKIT_CACHE=$(BQLKIT_CACHE) (downloads: kernel images, chroots)'

build modules:
	@test -n "$(KVER)" || { echo 'bqlkit: error: no kernel headers installed; give KVER= or run make install' >&2; exit 1; }
	BQLKIT_DRIVERS="$(DRIVERS)" $(TOP)/scripts/build.sh $(KVER)

import:
	@test -n "$(SRC)" || { echo 'bqlkit: error: give SRC=<linux-source tarball, tree or git tree>' >&2; exit 1; }
	BQLKIT_DRIVERS="$(DRIVERS)" $(TOP)/scripts/import-source.sh $(SRC)

probe:
	$(TOP)/scripts/probe.sh $${KDIR:-/lib/modules/$(KVER)/build} $(TOP)/build/$(KVER)/compat

probe-report: probe
	$(TOP)/scripts/probe-report.sh $${KDIR:-/lib/modules/$(KVER)/build} $(TOP)/build/$(KVER)/compat

drift:
	$(TOP)/scripts/check-drift.sh

install:
	$(TOP)/scripts/install.sh $(if $(filter command line,$(origin KVER)),$(KVER))

uninstall:
	$(TOP)/scripts/uninstall.sh

dkms-source:
	$(TOP)/scripts/make-dkms-source.sh $(DESTDIR)

# Run by DKMS inside its build directory (see dkms.conf).
dkms-build:
	BQLKIT_BASES=$(TOP)/bases BQLKIT_BUILD=$(TOP)/build $(TOP)/scripts/build.sh $(KVER)
	mkdir -p $(TOP)/out && cp $(TOP)/build/$(KVER)/*.ko $(TOP)/out/

dkms-clean:
	rm -rf $(TOP)/build $(TOP)/out

deps:
	$(TOP)/scripts/install-deps.sh build

check:
	$(TOP)/tests/run.sh

check-quick:
	BQLKIT_QUICK=1 $(TOP)/tests/run.sh

clean:
	rm -rf $(filter-out $(TOP)/build/bases,$(wildcard $(TOP)/build/*)) $(TOP)/out

distclean:
	rm -rf $(TOP)/build $(TOP)/out
