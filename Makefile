# tao-slurm: the README's commands and the developer targets.
#   make demo       set up everything on a fresh machine and run the main job end to end
#   make test       set up everything and run the tests (what CI runs): on Slurm 22.05, then the
#                   cluster tests again on Slurm 24.11 (TAO_TEST_2411=0 skips that pass);
#                   ends with one FAILED: line per failed test target (scripts/test-failures)
#   make cluster-up the 22.05 cluster; TAO_CLUSTERS=all also the 24.11 one and cluster b
#   make bench      every benchmark, each as a ratio against its baseline measured in the same run
#   make install    PREFIX=/usr/local [DESTDIR=]: binaries, man pages, shell completions
#   make uninstall  remove exactly those files again (same PREFIX/DESTDIR), and the directories left empty
#   make man        regenerate man/*.1, man/tao-site-profile.5, man/tao-jobline.7 and man/completions/ (checked in)
#   make fuzz       run every fuzz target for FUZZ_SECONDS (default 60) each
#   make eval       score tao-classify on the real-failure corpus (dev and test splits); fails when test misses the goals
#   make train      retrain tao-classify's evidence fallback on the corpus's dev split (writes tao-classify/rules/fallback.tsv; commit it)
#   make duplicates list repeated runs of 10+ lines in the product code (every crate's src/, unit tests left out;
#                   scripts/duplicates, needs the `duplicates` developer command); fails when it lists any

PREFIX ?= /usr/local
BINDIR = $(DESTDIR)$(PREFIX)/bin
MANDIR = $(DESTDIR)$(PREFIX)/share/man
CARGO ?= cargo
TOOLS = tao-record tao-render tao-redact tao-submit tao-poll tao-classify

.PHONY: eval train demo test bench build release install uninstall cluster-up cluster-down man completions fuzz duplicates

# install: PROFILE picks the build (release, or dev for target/debug);
# NO_BUILD=1 installs what is already built (the install test uses it with
# the debug binaries the test run has just built). TARGET_DIR follows
# CARGO_TARGET_DIR when that is set.
PROFILE ?= release
TARGET_DIR ?= $(or $(CARGO_TARGET_DIR),target)
BUILD_DIR = $(TARGET_DIR)/$(if $(filter dev,$(PROFILE)),debug,$(PROFILE))
MAN1DIR = $(MANDIR)/man1
MAN5DIR = $(MANDIR)/man5
MAN7DIR = $(MANDIR)/man7
BASHDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHDIR = $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHDIR = $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
INSTALLED = $(TOOLS:%=$(BINDIR)/%) $(TOOLS:%=$(MAN1DIR)/%.1) $(MAN5DIR)/tao-site-profile.5 $(MAN7DIR)/tao-jobline.7 \
	$(TOOLS:%=$(BASHDIR)/%) $(TOOLS:%=$(ZSHDIR)/_%) $(TOOLS:%=$(FISHDIR)/%.fish)
FUZZ_SECONDS ?= 60
FUZZ_FLAGS ?=
FUZZ_TARGETS = jobline squeue_sacct redact classify line_reader hostlist

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

duplicates:
	bash scripts/duplicates

# EVAL_FLAGS=--dev-misses also lists each missed dev record (test misses are never listed);
# --dev-only prints the dev split alone (no test figure, exit 0); --by-rule adds each deciding rule with the labels of its dev records.
eval:
	$(CARGO) run -q --release -p tao-classify --example eval -- $(EVAL_FLAGS)

# Deterministic; a test fails when the dev split or the built-in rules changed and this was not rerun.
train:
	$(CARGO) run -q --release -p tao-classify --example train

install:
	@if [ -z "$(NO_BUILD)" ]; then $(CARGO) build --profile $(PROFILE) --bins $(TOOLS:%=-p %); fi
	@for t in $(TOOLS); do test -x "$(BUILD_DIR)/$$t" || { echo "make install: $(BUILD_DIR)/$$t is missing; build it (make release) or drop NO_BUILD" >&2; exit 1; }; done
	install -d "$(BINDIR)" "$(MAN1DIR)" "$(MAN5DIR)" "$(MAN7DIR)" "$(BASHDIR)" "$(ZSHDIR)" "$(FISHDIR)"
	install -m 755 $(TOOLS:%=$(BUILD_DIR)/%) "$(BINDIR)/"
	install -m 644 $(TOOLS:%=man/%.1) "$(MAN1DIR)/"
	install -m 644 man/tao-site-profile.5 "$(MAN5DIR)/"
	install -m 644 man/tao-jobline.7 "$(MAN7DIR)/"
	install -m 644 $(TOOLS:%=man/completions/bash/%) "$(BASHDIR)/"
	install -m 644 $(TOOLS:%=man/completions/zsh/_%) "$(ZSHDIR)/"
	install -m 644 $(TOOLS:%=man/completions/fish/%.fish) "$(FISHDIR)/"

# uninstall: the installed files, then each directory install wrote into
# and its parents while they are empty, up to $(DESTDIR)$(PREFIX) (never
# that one; a directory holding anything else stays).
uninstall:
	rm -f $(INSTALLED)
	@for d in "$(BINDIR)" "$(MAN1DIR)" "$(MAN5DIR)" "$(MAN7DIR)" "$(BASHDIR)" "$(ZSHDIR)" "$(FISHDIR)"; do \
	    while [ "$$d" != "$(DESTDIR)$(PREFIX)" ] && [ "$$d" != / ] && [ -d "$$d" ] && rmdir "$$d" 2>/dev/null; do \
	        echo "rmdir $$d"; d=$$(dirname "$$d"); done; \
	done

man completions:
	$(CARGO) run -q -p tao-man

# Each fuzz target for FUZZ_SECONDS on the stable toolchain: cargo-fuzz needs
# nightly -Z flags, which RUSTC_BOOTSTRAP=1 unlocks. First the saved
# regressions are replayed (those listed in fuzz/regressions/OPEN wait for a
# fix elsewhere and are only named), then each target runs from its seeds; a
# crash ends that target (the others still run). To go on past a known crash,
# FUZZ_FLAGS='-fork=1 -ignore_crashes=1' (slower: fewer runs per second).
# New crashes land in fuzz/artifacts/<target>/ and fail the run: keep each
# in fuzz/regressions/<target>/.
fuzz:
	@command -v cargo-fuzz >/dev/null || { echo "make fuzz: cargo-fuzz is missing: cargo install cargo-fuzz --locked" >&2; exit 1; }
	cd fuzz && rc=0; for t in $(FUZZ_TARGETS); do \
	    mkdir -p corpus/$$t artifacts/$$t && cp -n seeds/$$t/* corpus/$$t/ 2>/dev/null; \
	    for r in regressions/$$t/*; do [ -f "$$r" ] || continue; \
	        if grep -q "^$$t/$${r##*/} " regressions/OPEN 2>/dev/null; then echo "make fuzz: $$r: open, see fuzz/regressions/OPEN" >&2; continue; fi; \
	        RUSTC_BOOTSTRAP=1 $(CARGO) fuzz run $$t "$$r" >/dev/null 2>&1 || { echo "make fuzz: $$t fails on $$r" >&2; rc=1; }; done; \
	    before=$$(ls artifacts/$$t | wc -l); \
	    RUSTC_BOOTSTRAP=1 $(CARGO) fuzz run $$t corpus/$$t -- -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=4096 $(FUZZ_FLAGS) || rc=1; \
	    after=$$(ls artifacts/$$t | wc -l); \
	    if [ "$$after" -gt "$$before" ]; then echo "make fuzz: $$t: $$((after - before)) new crash(es) in fuzz/artifacts/$$t/" >&2; rc=1; fi; \
	done; exit $$rc
