# deb: the Debian packages (debian/: nfsrdma-common, nfsrdma-server,
# nfsrdma-client), built by dpkg-buildpackage from this tree's make dist
# tarball in $(DEB_DIR), so the source tree stays clean; then their contents
# checked (dpkg-deb --info, dpkg -c) and lintian run (scripts/build-deb.sh).
DEB_FILES = debian/changelog debian/control debian/copyright debian/rules \
	debian/source/format debian/nfsrdma-common.install debian/nfsrdma-server.install \
	debian/nfsrdma-client.install debian/nfsrdma-client.links debian/clean \
	debian/nfsrdma-server.postrm
EXTRA_DIST += $(DEB_FILES)
DEB_DIR = $(abs_top_builddir)/deb
deb:
	@cd $(srcdir) && for f in $$(find debian -type f); do \
		case " $(DEB_FILES) " in *" $$f "*) ;; \
		*) echo "deb: $$f is not in DEB_FILES (mk/deb.mk), so not in the tarball"; exit 1 ;; esac; \
	done
	rm -f $(distdir).tar.gz
	$(MAKE) $(AM_MAKEFLAGS) dist-gzip
	$(SHELL) $(srcdir)/scripts/build-deb.sh $(distdir).tar.gz $(DEB_DIR); \
		st=$$?; rm -f $(distdir).tar.gz; exit $$st
PHONY_TARGETS += deb deb-clean
EXTRA_TARGETS += deb:300
clean-local: deb-clean
deb-clean:
	rm -rf $(DEB_DIR)
