# feedsync — the conventional entry points.
#
#   make demo        install what is missing, build, and sync the offline demo feed
#   make check       build with zero warnings, run the unit and contract tests (no end-to-end): a first check
#   make test        install what is missing, build with zero warnings, run every test
#   make install     release binaries (Swift runtime linked in), the systemd unit, the manual pages,
#                    shell completions
#   make uninstall   remove what `make install` put there
#   make man         the manual pages, written by `feedsync man` from the code, into .build/man
#   make deb         a Debian package of what install installs, built with dpkg-deb: feedsync_VERSION_ARCH.deb
#
# PREFIX (default /usr/local) and DESTDIR are honoured by install and uninstall.

SHELL   := /bin/bash
SWIFT   ?= swift
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  := $(PREFIX)/bin
UNITDIR := $(PREFIX)/lib/systemd/system
BASHDIR := $(PREFIX)/share/bash-completion/completions
ZSHDIR  := $(PREFIX)/share/zsh/site-functions
FISHDIR := $(PREFIX)/share/fish/vendor_completions.d
MANDIR  := $(PREFIX)/share/man
RELEASE := .build/release
VERSION := $(shell sed -n 's/^public let feedsyncVersion = "\(.*\)"/\1/p' Sources/App/Version.swift)

.PHONY: all deps test-deps build build-clean demo check test fixtures-test docs-check release man install uninstall deb clean

all: build

deps:
	@bash .ci/deps build

test-deps:
	@bash .ci/deps test

build: deps
	$(SWIFT) build

demo: build
	FEEDSYNC_PASSWORD=demo .build/debug/feedsync pull --config config.example.json
	.build/debug/feedsync posts --config config.example.json --limit 3

# A warning fails the build, the tests' code included: the package must build clean.
build-clean:
	@set -o pipefail; $(SWIFT) build --build-tests 2>&1 | tee .build-log.txt
	@if grep -q "warning:" .build-log.txt; then echo "swift build printed warnings; fix them" >&2; rm -f .build-log.txt; exit 1; fi
	@rm -f .build-log.txt

# The first check of a change: every test target but EndToEndTests (the unit tests, the store
# contract on SQLite and on a PostgreSQL server it starts, the fixture-backed transport tests).
check: test-deps build-clean docs-check
	$(SWIFT) test --skip-build --skip EndToEndTests

# Every test, in parallel as `swift test` runs them: no test asserts how fast the machine is.
test: test-deps build-clean docs-check
	$(MAKE) --no-print-directory fixtures-test
	$(SWIFT) test --skip-build

# The fixture servers check themselves.
fixtures-test:
	python3 Fixtures/reference-api/test_server.py
	python3 Fixtures/mastodon/test_server.py
	python3 Fixtures/bluesky/test_server.py
	python3 Fixtures/bluesky/test_jetstream.py
	python3 Fixtures/bluesky/test_jetstream_websockets.py
	python3 Fixtures/hostile/test_server.py
	python3 Fixtures/webfeed/test_server.py
	python3 Fixtures/test_credential_echo.py

# Every relative link of the Markdown manual (README.md, docs/, Integrations/*/README.md) resolves.
docs-check:
	python3 .ci/check-links

# The Swift runtime and Foundation are linked in, so a server without the toolchain runs the
# binaries; they need only the C libraries (libc, libcurl, libsqlite3, libpq, libxml2).
release: deps
	$(SWIFT) build -c release --static-swift-stdlib

# feedsync(1), feedsyncd(8) and feedsync.json(5), written from the commands' declarations and the
# config's key tables by the release binary, so they cannot drift from the code.
man: release
	install -d .build/man
	$(RELEASE)/feedsync man feedsync > .build/man/feedsync.1
	$(RELEASE)/feedsync man feedsyncd > .build/man/feedsyncd.8
	$(RELEASE)/feedsync man config > .build/man/feedsync.json.5

install: release man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(BASHDIR) $(DESTDIR)$(ZSHDIR) $(DESTDIR)$(FISHDIR)
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	install -m 0755 $(RELEASE)/feedsync $(RELEASE)/feedsyncd $(DESTDIR)$(BINDIR)/
	sed -e 's|/usr/local/bin/|$(BINDIR)/|g' Sources/feedsyncd/feedsyncd.service > $(DESTDIR)$(UNITDIR)/feedsyncd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/feedsyncd.service
	$(RELEASE)/feedsync completion bash > $(DESTDIR)$(BASHDIR)/feedsync
	$(RELEASE)/feedsync completion zsh > $(DESTDIR)$(ZSHDIR)/_feedsync
	$(RELEASE)/feedsync completion fish > $(DESTDIR)$(FISHDIR)/feedsync.fish
	install -m 0644 .build/man/feedsync.1 $(DESTDIR)$(MANDIR)/man1/feedsync.1
	install -m 0644 .build/man/feedsync.json.5 $(DESTDIR)$(MANDIR)/man5/feedsync.json.5
	install -m 0644 .build/man/feedsyncd.8 $(DESTDIR)$(MANDIR)/man8/feedsyncd.8

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/feedsync $(DESTDIR)$(BINDIR)/feedsyncd
	rm -f $(DESTDIR)$(UNITDIR)/feedsyncd.service
	rm -f $(DESTDIR)$(BASHDIR)/feedsync $(DESTDIR)$(ZSHDIR)/_feedsync $(DESTDIR)$(FISHDIR)/feedsync.fish
	rm -f $(DESTDIR)$(MANDIR)/man1/feedsync.1 $(DESTDIR)$(MANDIR)/man5/feedsync.json.5 $(DESTDIR)$(MANDIR)/man8/feedsyncd.8

# A Debian package of what `make install` installs, under /usr: feedsync_$(VERSION)_ARCH.deb here.
# packaging/build-deb says what goes in and how Depends: is worked out; .ci/check-deb checks it
# (lintian, install, run, man, remove).
deb: release man
	bash packaging/build-deb $(VERSION)

clean:
	rm -rf .build
