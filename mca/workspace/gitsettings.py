"""Which git settings make git run a program, and which are known not to: the tables, and the
verdict on one setting (mca/workspace/gitconfig.py reads the files). The inert ones are an
allow-list: a setting on no list (one a later git added, a typo, a trap) is reported, never
trusted. Pure data and functions."""

from __future__ import annotations

__all__ = ["known", "runs_program"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# section.name (no subsection), section.*.name (any subsection) and section.* (any name):
# settings whose value is a program git starts (or where it reads more configuration from)
_ALWAYS = {
    "core.hookspath",
    "core.sshcommand",
    "core.pager",
    "core.editor",
    "core.askpass",
    "core.gitproxy",
    "core.alternaterefscommand",
    "sequence.editor",
    "diff.external",
    "diff.*.textconv",
    "diff.*.command",
    "merge.*.driver",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "gpg.program",
    "gpg.*.program",
    "gpg.ssh.defaultkeycommand",
    "mergetool.*.cmd",
    "mergetool.*.path",
    "difftool.*.cmd",
    "difftool.*.path",
    "man.*.cmd",
    "man.*.path",
    "browser.*.cmd",
    "browser.*.path",
    "web.browser",
    "sendemail.sendmailcmd",
    "sendemail.tocmd",
    "sendemail.cccmd",
    "remote.*.uploadpack",
    "remote.*.receivepack",
    "trailer.*.command",
    "trailer.*.cmd",
    "imap.tunnel",
    "hook.*.command",
    "include.path",
    "includeif.*.path",
}
_NOT_BOOLEAN = {"core.fsmonitor", "pager.*"}  # true/false are not programs
_BANG = {"alias.*", "submodule.*.update"}  # only a value starting with "!" runs a shell
_BOOLEANS = {"", "true", "false", "yes", "no", "on", "off", "1", "0"}
_MORE = {  # settings whose value is a program, beside _ALWAYS: read as git reads them
    "interactive.difffilter",  # `git add -p` pipes the diff through it
    "uploadpack.packobjectshook",
    "lfs.customtransfer.*.path",
    "lfs.extension.*.clean",
    "lfs.extension.*.smudge",
    "guitool.*.cmd",
    "instaweb.httpd",
    "help.browser",
    "init.templatedir",  # a template's hooks are copied in by the next `git init` here
}
# Settings known to make git run nothing: the allow-list. A key on none of these lists is
# reported as one mca does not know (a setting added by a later git, a typo, a trap), never
# trusted. Whole sections first, then single settings (patterns as _ALWAYS's).
_INERT_SECTIONS = _words(
    "user author committer color i18n gc pack index status log column advice blame rerere"
    " fetch pull push branch extensions maintenance http commit tag rebase safe feature"
    " worktree checkout clone apply am sparse splitindex stash notes transfer receive fsck"
    " fastimport grep url bundle versionsort format uploadarchive repack submodule"
)
_INERT = _words(
    # core: what `git init` and `git clone` write, and the usual tuning
    "core.repositoryformatversion core.filemode core.bare core.logallrefupdates"
    " core.ignorecase core.precomposeunicode core.protecthfs core.protectntfs core.symlinks"
    " core.autocrlf core.eol core.safecrlf core.checkroundtripencoding core.compression"
    " core.loosecompression core.packedgitwindowsize core.packedgitlimit"
    " core.deltabasecachelimit core.bigfilethreshold core.quotepath core.worktree"
    " core.sharedrepository core.longpaths core.untrackedcache core.splitindex"
    " core.commitgraph core.multipackindex core.checkstat core.trustctime core.abbrev"
    " core.excludesfile core.attributesfile core.whitespace core.preloadindex core.fscache"
    " core.fsync core.fsyncmethod core.fsyncobjectfiles core.createobject core.notesref"
    " core.sparsecheckout core.sparsecheckoutcone core.warnambiguousrefs"
    " core.restrictinheritedhandles core.commentchar core.commentstring"
    " core.filesreflocktimeout core.packedrefstimeout core.hidedotfiles"
    " core.fsmonitorhookversion core.maxtreedepth"
    " remote.*.url remote.*.pushurl remote.*.fetch remote.*.push remote.*.tagopt"
    " remote.*.mirror remote.*.prune remote.*.prunetags remote.*.skipdefaultupdate"
    " remote.*.skipfetchall remote.*.partialclonefilter remote.*.promisor remote.*.proxy"
    " remote.*.proxyauthmethod remote.*.vcs remote.*.followremotehead remote.*.serveroption"
    " remote.pushdefault"
    " diff.algorithm diff.renames diff.renamelimit diff.colormoved diff.colormovedws"
    " diff.mnemonicprefix diff.noprefix diff.relative diff.statgraphwidth diff.context"
    " diff.interhunkcontext diff.indentheuristic diff.submodule diff.ignoresubmodules"
    " diff.tool diff.guitool diff.orderfile diff.suppressblankempty diff.dirstat"
    " diff.autorefreshindex diff.wordregex diff.statnamewidth diff.srcprefix diff.dstprefix"
    " diff.*.wordregex diff.*.binary diff.*.xfuncname diff.*.funcname diff.*.cachetextconv"
    " merge.ff merge.conflictstyle merge.tool merge.guitool merge.log merge.renames"
    " merge.renamelimit merge.renormalize merge.stat merge.autostash merge.verbosity"
    " merge.directoryrenames merge.defaulttoupstream merge.branchdesc"
    " merge.*.name merge.*.recursive"
    " difftool.prompt difftool.trustexitcode difftool.*.trustexitcode mergetool.prompt"
    " mergetool.keepbackup mergetool.keeptemporaries mergetool.writetotemp"
    " mergetool.*.trustexitcode"
    " filter.*.required credential.username credential.usehttppath credential.*.username"
    " credential.*.usehttppath credential.helper credential.*.helper"
    " protocol.allow protocol.version protocol.*.allow"
    " gpg.format gpg.mintrustlevel gpg.ssh.allowedsignersfile gpg.ssh.revocationfile"
    " trailer.separators trailer.where trailer.ifexists trailer.ifmissing trailer.*.key"
    " trailer.*.where trailer.*.ifexists trailer.*.ifmissing"
    " lfs.url lfs.repositoryformatversion lfs.*.access lfs.locksverify lfs.fetchinclude"
    " lfs.fetchexclude init.defaultbranch help.autocorrect interactive.singlekey"
    " man.viewer hook.*.event uploadpack.allowfilter uploadpack.allowanysha1inwant"
    " uploadpack.allowtipsha1inwant uploadpack.allowreachablesha1inwant"
    " sendemail.from sendemail.to sendemail.cc sendemail.bcc sendemail.smtpuser"
    " sendemail.smtpserverport sendemail.smtpencryption sendemail.confirm"
    " sendemail.annotate sendemail.suppresscc sendemail.chainreplyto"
)


def _pattern(key: str) -> str:
    """'filter.lfs.clean' -> 'filter.*.clean' (the subsection is any text, dots included)."""
    first, _, rest = key.partition(".")
    if "." not in rest:
        return key
    return f"{first}.*.{rest.rsplit('.', 1)[1]}"


def known(key: str) -> bool:
    """Whether mca knows this setting (key as `parse` gives it): on the allow-list of inert
    settings or among those that run programs. An unknown one is reported, not trusted."""
    pattern, section = _pattern(key.lower()), key.split(".", 1)[0].lower()
    return (
        section in _INERT_SECTIONS
        or pattern in _INERT
        or pattern in _ALWAYS
        or pattern in _MORE
        or pattern in _NOT_BOOLEAN
        or f"{section}.*" in _NOT_BOOLEAN
        or f"{section}.*" in _BANG
        or pattern in _BANG
        or key.lower() == "sendemail.smtpserver"
    )


def runs_program(key: str, value: str | None) -> bool:
    """Whether this setting (key as `parse` gives it) may make git run a program: one of
    those known to, with a value that does, or one not known to be inert."""
    pattern, section = _pattern(key.lower()), key.split(".", 1)[0].lower()
    text = (value or "").strip()
    if pattern in _ALWAYS or pattern in _MORE:
        return True
    if pattern in _NOT_BOOLEAN or f"{section}.*" in _NOT_BOOLEAN:
        return value is not None and text.lower() not in _BOOLEANS
    if pattern in _BANG or f"{section}.*" in _BANG:
        return text.startswith("!")
    if section == "credential" and key.lower().endswith(".helper"):
        first = text.split(maxsplit=1)[0] if text else ""
        return first.startswith("!") or "/" in first
    if key.lower() == "protocol.ext.allow":
        return text.lower() != "never"
    if section == "remote" and key.lower().rsplit(".", 1)[-1] in ("url", "pushurl"):
        return text.lower().startswith("ext::")
    if key.lower() == "sendemail.smtpserver":  # a path is a program to send with
        return text.startswith("/") or text.startswith("~")
    return not known(key)
