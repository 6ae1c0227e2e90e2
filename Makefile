# tao-slurm: the README's commands and the developer targets.
#   make demo       set up everything on a fresh machine and run the main job end to end
#   make test       set up everything and run the tests (what CI runs)
#   make bench      every benchmark, each as a ratio against its baseline measured in the same run
#   make install    PREFIX=/usr/local: binaries, man pages, shell completions
#   make uninstall  remove them again

PREFIX ?= /usr/local
BINDIR = $(DESTDIR)$(PREFIX)/bin
MANDIR = $(DESTDIR)$(PREFIX)/share/man
CARGO ?= cargo
TOOLS = tao-record tao-render tao-redact tao-submit tao-poll tao-classify

.PHONY: demo test bench build release install uninstall cluster-up cluster-down

demo:
	bash scripts/demo

test:
	bash scripts/test

cluster-up:
	bash tests/cluster/up

cluster-down:
	bash tests/cluster/down

build:
	$(CARGO) build --workspace

release:
	$(CARGO) build --workspace --release --bins

bench: release
	bash scripts/bench
