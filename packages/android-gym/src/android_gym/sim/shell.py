"""The simulated phone's ``sh``: parses command lines with shlex and runs the Android tools tasks and drivers use.

Supported: ``input``, ``am``, ``monkey``, ``settings``, ``content``, ``uiautomator dump``, ``screencap``,
``wm``, ``getprop``, ``dumpsys window|activity``, ``pm list packages``, ``svc``, ``date``, ``echo``,
``cat``, ``ls``, ``rm``, ``mkdir``, ``cp``, ``mv``, ``touch``, ``sleep``, ``true``/``false``, plus
``;``, ``&&``, ``||``, pipes into ``grep``/``head``/``tail``/``wc -l`` and ``>``/``>>`` redirection.
Unknown commands answer like sh does, with status 127. Nothing is ever evaluated.
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import posixpath
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from android_gym.sim.constants import LAUNCHER_PACKAGE, START_TIME
from android_gym.sim.content import (
    ContentError,
    format_rows,
    parse_bind,
    parse_where,
    project,
    sort_rows,
    split_uri,
)
from android_gym.sim.files import FileSystemError

if TYPE_CHECKING:  # pragma: no cover
    from android_gym.sim.phone import SimPhone

SH = "/system/bin/sh"
_OPERATORS = (";", "&&", "||", "|", ">", ">>")

GETPROP: dict[str, str] = {
    "ro.product.model": "Pixel 6",
    "ro.product.brand": "google",
    "ro.product.name": "oriole",
    "ro.product.device": "oriole",
    "ro.product.manufacturer": "Google",
    "ro.build.version.sdk": "33",
    "ro.build.version.release": "13",
    "ro.build.id": "TQ3A.230805.001",
    "ro.build.display.id": "TQ3A.230805.001",
    "ro.build.type": "userdebug",
    "ro.build.fingerprint": "google/oriole/oriole:13/TQ3A.230805.001/10316531:userdebug/dev-keys",
    "ro.kernel.qemu": "1",
    "ro.hardware": "ranchu",
    "ro.serialno": "EMULATOR33X1X1X0",
    "sys.boot_completed": "1",
    "dev.bootcomplete": "1",
    "init.svc.bootanim": "stopped",
    "persist.sys.timezone": "UTC",
    "persist.sys.locale": "en-US",
}

SYSTEM_PACKAGES = ("android", "com.android.systemui", "com.android.phone", "com.android.providers.settings",
                   "com.android.providers.contacts", "com.android.providers.telephony",
                   "com.android.shell", "com.google.android.inputmethod.latin", "com.google.android.gms")


@dataclass
class ShellResult:
    """What one command line produced: stdout bytes and the exit status of its last command."""

    output: bytes
    status: int


class ShellExit(Exception):
    """Internal: a command finished with a message and a status."""

    def __init__(self, message: str, status: int = 1):
        super().__init__(message)
        self.message = message
        self.status = status


def _newlines_to_semicolons(command: str) -> str:
    """A script's line breaks (outside quotes) end commands, as ``;`` does."""
    if "\n" not in command:
        return command
    out: list[str] = []
    quote = ""
    escaped = False
    for ch in command:
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "\n":
            ch = ";"
        out.append(ch)
    return "".join(out)


def _tokenize(command: str) -> list[str]:
    lexer = shlex.shlex(_newlines_to_semicolons(command), posix=True, punctuation_chars=";&|><")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError as exc:
        raise ShellExit(f"{SH}: syntax error: {exc}", 2) from None


def _split_pipeline(tokens: list[str]) -> list[tuple[str | None, list[list[str]], tuple[str, str] | None]]:
    """[(joiner_before, [argv per pipe stage], redirect)] for ``a | b > f ; c && d``."""
    out: list[tuple[str | None, list[list[str]], tuple[str, str] | None]] = []
    joiner: str | None = None
    stages: list[list[str]] = [[]]
    redirect: tuple[str, str] | None = None
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t in (";", "&&", "||", "&"):
            out.append((joiner, stages, redirect))
            joiner, stages, redirect = t, [[]], None
        elif t == "|":
            stages.append([])
        elif t in (">", ">>"):
            if i + 1 >= len(tokens) or tokens[i + 1] in _OPERATORS:
                raise ShellExit(f"{SH}: syntax error: unexpected newline", 2)
            redirect = (t, tokens[i + 1])
            i += 1
        elif t in ("2>", "2>&1"):
            pass
        else:
            stages[-1].append(t)
        i += 1
    out.append((joiner, stages, redirect))
    return [(j, [s for s in st if s], r) for j, st, r in out if any(st)]


_KEYWORDS = ("if", "then", "elif", "else", "fi")


@dataclass
class _IfBlock:
    """One open ``if``: whether its enclosing code runs, whether a branch ran, what runs now."""

    outer: bool
    phase: str = "if"
    taken: bool = False
    branch: bool = False

    @property
    def running(self) -> bool:
        """Whether commands met now run (a condition is evaluated only while no branch was taken)."""
        if self.phase in ("if", "elif"):
            return self.outer and not self.taken
        return self.branch


def _enter_keyword(blocks: list[_IfBlock], word: str, status: int) -> bool:
    """Advance the ``if`` blocks past ``word``; True when the rest of that command line runs."""
    if word == "if":
        blocks.append(_IfBlock(outer=not blocks or blocks[-1].running))
        return blocks[-1].running
    if not blocks:
        raise ShellExit(f"{SH}: syntax error: unexpected '{word}'", 2)
    block = blocks[-1]
    if word == "then":
        if block.phase not in ("if", "elif"):
            raise ShellExit(f"{SH}: syntax error: unexpected 'then'", 2)
        block.branch = block.outer and not block.taken and status == 0
        block.taken = block.taken or block.branch
        block.phase = "then"
    elif word == "elif":
        block.phase = "elif"
    elif word == "else":
        block.branch = block.outer and not block.taken
        block.taken = True
        block.phase = "else"
    else:  # fi
        blocks.pop()
        return not blocks or blocks[-1].running
    return block.running


class Shell:
    """Runs command lines against one :class:`~android_gym.sim.phone.SimPhone`."""

    def __init__(self, phone: SimPhone):
        self.phone = phone
        self.commands: dict[str, Callable[[list[str], bytes], bytes]] = {
            "input": self._cmd_input, "am": self._cmd_am, "monkey": self._cmd_monkey, "settings": self._cmd_settings,
            "content": self._cmd_content, "uiautomator": self._cmd_uiautomator, "screencap": self._cmd_screencap,
            "wm": self._cmd_wm, "getprop": self._cmd_getprop, "dumpsys": self._cmd_dumpsys, "pm": self._cmd_pm,
            "svc": self._cmd_svc, "date": self._cmd_date, "echo": self._cmd_echo, "cat": self._cmd_cat,
            "ls": self._cmd_ls, "rm": self._cmd_rm, "mkdir": self._cmd_mkdir, "cp": self._cmd_cp, "mv": self._cmd_mv,
            "touch": self._cmd_touch, "sleep": self._cmd_sleep, "true": lambda a, i: b"",
            "false": self._cmd_false, "grep": self._cmd_grep, "head": self._cmd_head, "tail": self._cmd_tail,
            "wc": self._cmd_wc, "id": lambda a, i: b"uid=2000(shell) gid=2000(shell) groups=2000(shell)\n",
            "whoami": lambda a, i: b"shell\n", "pwd": lambda a, i: b"/\n", "cmd": self._cmd_cmd,
            "[": self._cmd_test, "test": self._cmd_test, "service": self._cmd_service, "find": self._cmd_find,
            "chmod": self._cmd_keep_files, "chown": self._cmd_keep_files, "restorecon": self._cmd_keep_files,
            "sync": lambda a, i: b"", "sqlite3": self._cmd_sqlite3,
        }

    # --- driver ---------------------------------------------------------------------------------
    def run(self, command: str) -> ShellResult:
        """Run a command line; the status is that of the last command run."""
        try:
            tokens = _tokenize(command)
            pipelines = _split_pipeline(tokens)
        except ShellExit as exc:
            return ShellResult((exc.message + "\n").encode(), exc.status)
        output: list[bytes] = []
        status = 0
        blocks: list[_IfBlock] = []
        for joiner, stages, redirect in pipelines:
            keyword = bool(stages[0]) and stages[0][0] in _KEYWORDS
            runs = True
            while stages[0] and stages[0][0] in _KEYWORDS:  # "then if ...": one keyword after another
                try:
                    runs = _enter_keyword(blocks, stages[0][0], status)
                except ShellExit as exc:
                    return ShellResult(b"".join(output) + (exc.message + "\n").encode(), exc.status)
                stages = [stages[0][1:], *stages[1:]]
            if keyword:
                if not runs or not stages[0]:
                    continue
                joiner = None
            elif blocks and not blocks[-1].running:
                continue
            if joiner == "&&" and status != 0:
                continue
            if joiner == "||" and status == 0:
                continue
            data = b""
            for argv in stages:
                data, status = self._run_one(argv, data)
            if redirect is not None:
                op, path = redirect
                try:
                    self.phone.files.write(path, data, self.phone.clock_ms, append=op == ">>")
                    self.phone.invalidate()
                except FileSystemError as exc:
                    output.append(f"{SH}: {exc}\n".encode())
                    status = 1
                data = b""
            output.append(data)
        if blocks:
            return ShellResult(b"".join(output) + f"{SH}: syntax error: 'if' without 'fi'\n".encode(), 2)
        return ShellResult(b"".join(output), status)

    def _glob(self, argv: list[str]) -> list[str]:
        """Expand ``*``/``?`` in absolute paths against the file system (no match: the word stays, as in sh)."""
        out: list[str] = []
        fs = self.phone.files
        for word in argv:
            if not word.startswith("/") or not any(c in word for c in "*?"):
                out.append(word)
                continue
            parts = word.strip("/").split("/")
            first = next(i for i, part in enumerate(parts) if any(c in part for c in "*?"))
            literal = fs.norm("/" + "/".join(parts[:first]))
            matches = [literal.rstrip("/")]
            for part in parts[first:]:
                nxt: list[str] = []
                for base in matches:
                    if any(c in part for c in "*?"):
                        names = fs.listdir(base or "/") if fs.is_dir(base or "/") else []
                        nxt += [f"{base}/{n}" for n in names if fnmatch.fnmatchcase(n, part)
                                and (part.startswith(".") or not n.startswith("."))]
                    elif fs.exists(f"{base}/{part}"):
                        nxt.append(f"{base}/{part}")
                matches = nxt
            out.extend(sorted(matches) if matches else [word])
        return out

    def _run_one(self, argv: list[str], stdin: bytes) -> tuple[bytes, int]:
        argv = self._glob(argv)
        name = argv[0]
        fn = self.commands.get(name)
        if fn is None:
            return f"{SH}: {name}: inaccessible or not found\n".encode(), 127
        try:
            return fn(argv[1:], stdin), 0
        except ShellExit as exc:
            msg = exc.message
            return ((msg + "\n") if msg else "").encode(), exc.status
        except FileSystemError as exc:
            return f"{name}: {exc}\n".encode(), 1
        except ContentError as exc:
            return f"Error while accessing provider: {exc}\n".encode(), 1
        except ValueError as exc:
            return f"{name}: {exc}\n".encode(), 1

    # --- input ----------------------------------------------------------------------------------
    def _cmd_input(self, args: list[str], stdin: bytes) -> bytes:
        p = self.phone
        if args and args[0] in ("touchscreen", "keyboard", "mouse", "touchpad", "dpad", "gamepad", "stylus"):
            args = args[1:]
        if not args:
            raise ShellExit("Usage: input [<source>] <command> [<arg>...]", 1)
        sub, rest = args[0], args[1:]

        def ints(n: int, what: str) -> list[int]:
            if len(rest) < n:
                raise ShellExit(f"Error: {what} needs {n} numbers, got {rest}", 1)
            try:
                return [int(float(v)) for v in rest[:n]]
            except ValueError:
                raise ShellExit(f"Error: {what} arguments must be numbers, got {rest}", 1) from None

        if sub == "tap":
            x, y = ints(2, "tap")
            p.tap(x, y)
        elif sub == "swipe":
            vals = ints(4, "swipe")
            ms = int(float(rest[4])) if len(rest) > 4 else 300
            p.swipe(*vals, ms)
        elif sub in ("draganddrop", "motionevent_drag"):
            vals = ints(4, "draganddrop")
            ms = int(float(rest[4])) if len(rest) > 4 else 1500
            p.drag(*vals, ms)
        elif sub == "text":
            if not rest:
                raise ShellExit("Error: input text needs a string", 1)
            # Android's Input command turns each "%s" into a space and nothing else (no escapes).
            text = " ".join(rest).replace("%s", " ")
            p.type_text(text)
        elif sub == "keyevent":
            codes = [a for a in rest if not a.startswith("--")]
            if not codes:
                raise ShellExit("Error: input keyevent needs a key code", 1)
            for code in codes:
                try:
                    p.keyevent(code)
                except ValueError as exc:
                    raise ShellExit(f"Error: {exc}", 1) from None
        elif sub == "press":
            p.keyevent(23)
        else:
            raise ShellExit(f"Error: Unknown command: {sub}", 1)
        return b""

    # --- activity manager, monkey -----------------------------------------------------------------
    def _cmd_am(self, args: list[str], stdin: bytes) -> bytes:
        p = self.phone
        if not args:
            raise ShellExit("usage: am [start|force-stop|kill|broadcast] ...", 1)
        sub = args[0]
        if sub in ("force-stop", "kill"):
            if len(args) < 2:
                raise ShellExit(f"am {sub}: missing package", 1)
            if args[-1] in p.apps:
                p.force_stop(args[-1])
            return b""
        if sub == "broadcast":
            return self._broadcast(args[1:])
        if sub == "stack" and args[1:2] in (["list"], ["remove"]):
            tasks = self._task_ids()
            if args[1] == "list":
                shown = {LAUNCHER_PACKAGE: 1, **tasks}
                lines = []
                for pkg, tid in shown.items():
                    act = p.apps[pkg].current_activity() if pkg == p.foreground else p.apps[pkg].activity
                    full = pkg + act if act.startswith(".") else act
                    lines.append(f"RootTask id={tid} bounds=[0,0][{p.width},{p.height}] displayId=0 userId=0")
                    lines.append(f"  taskId={tid}: {pkg}/{full} bounds=[0,0][{p.width},{p.height}] userId=0 "
                                 f"visible={str(pkg == p.foreground).lower()} topActivity=ComponentInfo{{{pkg}/{full}}}")
                return ("\n".join(lines) + "\n").encode()
            ids = {str(tid): pkg for pkg, tid in tasks.items()}
            for tid in args[2:]:
                if tid in ids:
                    self._remove_task(ids[tid])
            return b""
        if sub not in ("start", "start-activity"):
            raise ShellExit(f"Error: unknown command '{sub}'", 1)
        component = action = data = None
        extras: dict[str, str] = {}
        stop_first = False
        i = 1
        while i < len(args):
            a = args[i]
            if a == "-n" and i + 1 < len(args):
                component = args[i + 1]
                i += 2
            elif a == "-a" and i + 1 < len(args):
                action = args[i + 1]
                i += 2
            elif a == "-d" and i + 1 < len(args):
                data = args[i + 1]
                i += 2
            elif a in ("-e", "--es", "--ei", "--ez", "--el") and i + 2 < len(args):
                extras[args[i + 1]] = args[i + 2]
                i += 3
            elif a == "-S":
                stop_first = True
                i += 1
            elif a in ("-c", "-t", "-f", "--user") and i + 1 < len(args):
                i += 2
            elif a.startswith("-"):
                i += 1
            else:
                component = component or (a if "/" in a else None)
                i += 1
        if component:
            pkg, _, act = component.partition("/")
            if pkg not in p.apps:
                raise ShellExit(f"Starting: Intent {{ cmp={component} }}\nError type 3\nError: Activity class "
                                f"{{{component}}} does not exist.", 1)
            if stop_first:
                p.force_stop(pkg)
            app = p.apps[pkg]
            if (action or data) and app.handle_intent(action, data, extras):
                p._switch_to(pkg)
            else:
                p.launch(pkg, from_shell=True)
            return f"Starting: Intent {{ cmp={component} }}\n".encode()
        if action or data:
            for pkg in sorted(p.apps):
                app = p.apps[pkg]
                if app.handle_intent(action, data, extras):
                    if not app.running:
                        app.open()
                    p._switch_to(pkg)
                    desc = " ".join(x for x in (f"act={action}" if action else "", f"dat={data}" if data else "") if x)
                    return f"Starting: Intent {{ {desc} }}\n".encode()
            raise ShellExit(f"Starting: Intent {{ act={action} dat={data} }}\nError: Activity not started, "
                            "unable to resolve Intent", 1)
        raise ShellExit("Error: no intent given (use -n pkg/.Activity or -a ACTION -d DATA)", 1)

    def _task_ids(self) -> dict[str, int]:
        """Recent apps (oldest first) with the task ids ``am stack`` and ``dumpsys activity recents`` show."""
        p = self.phone
        return {pkg: 100 + sorted(p.apps).index(pkg) for pkg in p.recents if pkg in p.apps}

    def _remove_task(self, package: str) -> None:
        """``am stack remove``: the app's task goes away (it is stopped; the launcher shows if it was in front)."""
        self.phone.force_stop(package)

    def _cmd_monkey(self, args: list[str], stdin: bytes) -> bytes:
        p = self.phone
        pkg = None
        for i, a in enumerate(args):
            if a == "-p" and i + 1 < len(args):
                pkg = args[i + 1]
        if pkg is None:
            raise ShellExit("** Error: monkey needs -p <package> here", 1)
        if pkg not in p.apps or not p.apps[pkg].in_launcher and pkg != "com.google.android.apps.nexuslauncher":
            raise ShellExit("  bash arg: -p\n** No activities found to run, monkey aborted.", 252)
        p.launch(pkg, from_shell=True)
        return f"  bash arg: -p\n  bash arg: {pkg}\nEvents injected: 1\n".encode()

    # --- settings and content ---------------------------------------------------------------------
    def _cmd_settings(self, args: list[str], stdin: bytes) -> bytes:
        p = self.phone
        while args and args[0].startswith("--"):
            args = args[2:] if args[0] == "--user" else args[1:]
        if len(args) < 2:
            raise ShellExit("usage: settings [--user N] get|put|delete|list NAMESPACE [KEY [VALUE]]", 1)
        verb, ns = args[0], args[1]
        if ns not in p.settings:
            raise ShellExit(f"Invalid namespace '{ns}'", 1)
        if verb == "get":
            if len(args) < 3:
                raise ShellExit("settings get: missing KEY", 1)
            v = p.settings_get(ns, args[2])
            return f"{'null' if v is None else v}\n".encode()
        if verb == "put":
            if len(args) < 4:
                raise ShellExit("settings put: missing KEY or VALUE", 1)
            p.settings_put(ns, args[2], args[3])
            return b""
        if verb == "delete":
            if len(args) < 3:
                raise ShellExit("settings delete: missing KEY", 1)
            return f"Deleted {int(p.settings_delete(ns, args[2]))} rows\n".encode()
        if verb == "list":
            return "".join(f"{k}={v}\n" for k, v in sorted(p.settings[ns].items())).encode()
        raise ShellExit(f"Invalid command: {verb}", 1)

    def _cmd_content(self, args: list[str], stdin: bytes) -> bytes:
        if not args:
            raise ShellExit("usage: content query|insert|update|delete --uri URI ...", 1)
        verb = args[0]
        opts: dict[str, str] = {}
        binds: list[str] = []
        i = 1
        while i < len(args):
            a = args[i]
            if a in ("--uri", "--projection", "--where", "--sort", "--user", "--arg") and i + 1 < len(args):
                opts[a[2:]] = args[i + 1]
                i += 2
            elif a == "--bind" and i + 1 < len(args):
                binds.append(args[i + 1])
                i += 2
            else:
                raise ShellExit(f"Error: unknown or incomplete argument {a!r} for content {verb}", 1)
        uri = opts.get("uri")
        if not uri:
            raise ShellExit(f"Error: content {verb} needs --uri", 1)
        authority, path = split_uri(uri)
        match = parse_where(opts.get("where"))
        p = self.phone
        if authority == "settings":
            return self._settings_provider(verb, path, match, binds, opts)
        if authority == "media":
            return self._media_provider(verb, path, match, opts)
        app = next((a for a in p.apps.values() if authority in a.authorities), None)
        if app is None:
            raise ShellExit(f"Error while accessing provider:{authority}\njava.lang.IllegalArgumentException: "
                            f"Unknown authority {authority}", 1)
        if verb == "query":
            rows = [r for r in app.content_query(uri) if match(r)]
            return format_rows(project(sort_rows(rows, opts.get("sort")), opts.get("projection"))).encode()
        values = dict(parse_bind(b) for b in binds)
        if verb == "insert":
            if not values:
                raise ShellExit("Error: content insert needs at least one --bind", 1)
            app.content_insert(uri, values)
        elif verb == "update":
            app.content_update(uri, values, match)
        elif verb == "delete":
            app.content_delete(uri, match)
        else:
            raise ShellExit(f"Error: unknown content command {verb!r}", 1)
        p.invalidate()
        return b""

    def _media_provider(self, verb: str, path: str, match: Callable, opts: dict[str, str]) -> bytes:
        """MediaStore over the /sdcard files: ``external/file`` (every file), ``external/downloads`` (Download/),
        ``external/images|video|audio/media`` (by extension). ``delete`` removes the matched files."""
        kinds = {"images": (".png", ".jpg", ".jpeg", ".gif", ".webp"), "video": (".mp4", ".mkv", ".webm", ".3gp"),
                 "audio": (".mp3", ".m4a", ".wav", ".ogg", ".opus")}
        parts = path.split("/")
        fs = self.phone.files
        if parts[:2] == ["external", "downloads"]:
            paths = fs.walk_files("/sdcard/Download")
        elif parts[:2] == ["external", "file"] or parts[:2] == ["external_primary", "file"]:
            paths = fs.walk_files("/sdcard")
        elif len(parts) >= 2 and parts[1] in kinds:
            paths = [q for q in fs.walk_files("/sdcard") if q.lower().endswith(kinds[parts[1]])]
        else:
            raise ShellExit(f"Error while accessing provider:media\njava.lang.IllegalArgumentException: Unknown URL "
                            f"content://media/{path}", 1)
        rows = [{"_id": i + 1, "_data": q.replace("/sdcard", "/storage/emulated/0", 1),
                 "_display_name": posixpath.basename(q), "_size": len(fs.files[q]),
                 "date_modified": fs.mtimes.get(q, 0) // 1000} for i, q in enumerate(paths)]
        rows = [r for r in rows if match(r)]
        if verb == "query":
            return format_rows(project(sort_rows(rows, opts.get("sort")), opts.get("projection"))).encode()
        if verb == "delete":
            for r in rows:
                fs.remove(r["_data"])
            self.phone.invalidate()
            return f"Deleted {len(rows)} rows\n".encode() if rows else b""
        raise ShellExit(f"Error: content {verb} on content://media/{path} is not supported here", 1)

    def _settings_provider(self, verb: str, path: str, match: Callable, binds: list[str],
                           opts: dict[str, str]) -> bytes:
        p = self.phone
        ns = path.split("/")[0]
        if ns not in p.settings:
            raise ShellExit(f"Error: unknown settings table {ns!r}", 1)
        rows = [{"_id": i + 1, "name": k, "value": v} for i, (k, v) in enumerate(sorted(p.settings[ns].items()))]
        if verb == "query":
            rows = [r for r in rows if match(r)]
            return format_rows(project(sort_rows(rows, opts.get("sort")), opts.get("projection"))).encode()
        values = dict(parse_bind(b) for b in binds)
        if verb in ("insert", "update"):
            if verb == "insert" and "name" in values:
                p.settings_put(ns, str(values["name"]), str(values.get("value", "")))
            else:
                for r in rows:
                    if match(r) and "value" in values:
                        p.settings_put(ns, r["name"], str(values["value"]))
        elif verb == "delete":
            for r in rows:
                if match(r):
                    p.settings_delete(ns, r["name"])
        return b""

    # --- screen ---------------------------------------------------------------------------------
    def _cmd_uiautomator(self, args: list[str], stdin: bytes) -> bytes:
        if not args or args[0] != "dump":
            raise ShellExit("Usage: uiautomator dump [--compressed] [file]", 1)
        paths = [a for a in args[1:] if not a.startswith("--")]
        path = paths[0] if paths else "/sdcard/window_dump.xml"
        xml = self.phone.dump()
        if path == "/dev/tty":
            return (xml + "UI hierchary dumped to: /dev/tty\n").encode()
        self.phone.files.write(path, xml, self.phone.clock_ms)
        return f"UI hierchary dumped to: {path}\n".encode()

    def _cmd_screencap(self, args: list[str], stdin: bytes) -> bytes:
        paths = [a for a in args if not a.startswith("-")]
        png = self.phone.screenshot_png()
        if paths:
            self.phone.files.write(paths[0], png, self.phone.clock_ms)
            return b""
        return png

    def _cmd_wm(self, args: list[str], stdin: bytes) -> bytes:
        p = self.phone
        if args[:1] == ["size"]:
            return f"Physical size: {p.width}x{p.height}\n".encode()
        if args[:1] == ["density"]:
            return f"Physical density: {p.density}\n".encode()
        raise ShellExit("usage: wm size|density", 1)

    def _cmd_getprop(self, args: list[str], stdin: bytes) -> bytes:
        props = dict(GETPROP)
        props["ro.sf.lcd_density"] = str(self.phone.density)
        props["persist.sys.timezone"] = self.phone.timezone
        if args:
            return (props.get(args[0], args[1] if len(args) > 1 else "") + "\n").encode()
        return "".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())).encode()

    def _cmd_dumpsys(self, args: list[str], stdin: bytes) -> bytes:
        p = self.phone
        comp = p.current_activity()
        pkg, _, act = comp.partition("/")
        full = pkg + act if act.startswith(".") else act
        if not args or args[0] == "window":
            return (f"WINDOW MANAGER WINDOWS (dumpsys window windows)\n"
                    f"  mCurrentFocus=Window{{4f3c1a2 u0 {pkg}/{full}}}\n"
                    f"  mFocusedApp=ActivityRecord{{9e1b7c4 u0 {pkg}/{act} t{10 + len(p.recents)}}}\n").encode()
        if args[0] == "activity" and args[1:2] != ["recents"]:
            return (f"ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n"
                    f"  mResumedActivity: ActivityRecord{{9e1b7c4 u0 {pkg}/{act} t{10 + len(p.recents)}}}\n"
                    f"  topResumedActivity=ActivityRecord{{9e1b7c4 u0 {pkg}/{act} t{10 + len(p.recents)}}}\n"
                    ).encode()
        if args[0] == "activity" and args[1:2] == ["recents"]:
            lines = ["ACTIVITY MANAGER RECENT TASKS (dumpsys activity recents)", "  Recent tasks:"]
            for i, (pkg, tid) in enumerate(reversed(list(self._task_ids().items()))):
                lines.append(f"  * Recent #{i}: Task{{{tid:x} #{tid} type=standard A=10{tid}:{pkg}}}")
                lines.append(f"    userId=0 effectiveUid=u0a{tid} mCallingUid=2000 mUserSetupComplete=true")
                lines.append(f"    id={tid} realActivity={pkg}/{p.apps[pkg].activity}")
            return ("\n".join(lines) + "\n").encode()
        if args[0] == "battery":
            return b"Current Battery Service state:\n  AC powered: true\n  level: 100\n  scale: 100\n"
        return f"Can't find service: {args[0]}\n".encode()

    def _cmd_pm(self, args: list[str], stdin: bytes) -> bytes:
        if args[:1] in (["clear"], ["grant"], ["revoke"]):
            words = [a for a in args[1:] if not a.startswith("-")]
            if args[1:2] == ["--user"]:
                words = words[1:]
            known = bool(words) and (words[0] in self.phone.apps or words[0] in SYSTEM_PACKAGES)
            if not known:
                raise ShellExit(f"Failed\nError: package {words[0] if words else ''!r} not found" if args[0] == "clear"
                                else f"Exception occurred while executing '{args[0]}':\njava.lang."
                                     f"IllegalArgumentException: Unknown package: {words[0] if words else ''}", 1)
            if args[0] == "clear":
                try:
                    self.phone.clear_app_data(words[0])
                except ValueError:  # a system package no simulated app stands for: nothing to clear
                    pass
                return b"Success\n"
            app = self.phone.apps.get(words[0])
            if app is not None and len(words) > 1 and hasattr(app, "set_permission"):
                app.set_permission(words[1], args[0] == "grant")
            return b""
        if args[:2] != ["list", "packages"]:
            if args[:1] == ["path"] and len(args) > 1:
                if args[1] in self.phone.apps:
                    return f"package:/data/app/{args[1]}/base.apk\n".encode()
                raise ShellExit("", 1)
            raise ShellExit("usage: pm list packages [-3] [FILTER]", 1)
        third_party = "-3" in args
        filt = [a for a in args[2:] if not a.startswith("-")]
        pkgs = set(self.phone.apps) | (set() if third_party else set(SYSTEM_PACKAGES))
        out = [f"package:{q}\n" for q in sorted(pkgs) if not filt or filt[0] in q]
        return "".join(out).encode()

    def _cmd_svc(self, args: list[str], stdin: bytes) -> bytes:
        keys = {"wifi": "wifi_on", "bluetooth": "bluetooth_on", "data": "mobile_data"}
        if len(args) < 2 or args[0] not in keys or args[1] not in ("enable", "disable"):
            raise ShellExit("usage: svc wifi|bluetooth|data enable|disable", 1)
        self.phone.settings_put("global", keys[args[0]], "1" if args[1] == "enable" else "0")
        return b""

    def _cmd_cmd(self, args: list[str], stdin: bytes) -> bytes:
        if args[:2] == ["connectivity", "airplane-mode"] and len(args) > 2:
            self.phone.settings_put("global", "airplane_mode_on", "1" if args[2] == "enable" else "0")
            return b""
        if args[:1] == ["bluetooth_manager"] and len(args) > 1:
            self.phone.settings_put("global", "bluetooth_on", "1" if args[1] == "enable" else "0")
            return b""
        raise ShellExit(f"cmd: Can't find service: {args[0] if args else ''}", 20)

    # --- files and misc -------------------------------------------------------------------------
    def _cmd_date(self, args: list[str], stdin: bytes) -> bytes:
        setting = [a for a in args if a[:1].isdigit()]
        if setting:
            self._set_date(setting[0])
        now = self.phone.now()
        fmt = next((a[1:] for a in args if a.startswith("+")), None)
        if fmt is None:
            return (now.strftime("%a %b %d %H:%M:%S UTC %Y") + "\n").encode()
        epoch = int((now - now.__class__(1970, 1, 1)).total_seconds())
        return (now.strftime(fmt.replace("%s", str(epoch))) + "\n").encode()

    def _set_date(self, value: str) -> None:
        """``date MMDDhhmm[[CC]YY][.ss]`` (toybox's form, what AndroidWorld sends): set the phone's clock."""
        now = self.phone.now()
        main, _, secs = value.partition(".")
        if not main.isdigit() or len(main) not in (8, 10, 12) or (secs and not secs.isdigit()):
            raise ShellExit(f"date: bad date '{value}'", 1)
        year = now.year if len(main) == 8 else int(main[8:]) + (2000 if len(main) == 10 else 0)
        try:
            when = _dt.datetime(year, int(main[0:2]), int(main[2:4]), int(main[4:6]), int(main[6:8]),
                                int(secs or 0))
        except ValueError:
            raise ShellExit(f"date: bad date '{value}'", 1) from None
        self.phone.clock_ms = int((when - START_TIME).total_seconds() * 1000)
        self.phone.invalidate()

    def _cmd_service(self, args: list[str], stdin: bytes) -> bytes:
        """``service call alarm 3 s16 ZONE`` (AlarmManager.setTimeZone, how AndroidWorld sets UTC); ``service list``."""
        if args[:1] == ["list"]:
            return b"Found 3 services:\n0\talarm: [android.app.IAlarmManager]\n1\tsettings: []\n2\tclipboard: []\n"
        if args[:1] == ["check"] and len(args) > 1:
            return f"Service {args[1]}: found\n".encode()
        if len(args) >= 3 and args[0] == "call" and args[1] == "alarm":
            if args[2] == "3" and len(args) >= 5 and args[3] == "s16":
                self.phone.timezone = args[4]
            return b"Result: Parcel(00000000    '....')\n"
        if len(args) >= 2 and args[0] == "call":
            return b"Result: Parcel(00000000    '....')\n"
        raise ShellExit("usage: service [check|list|call] SERVICE [CODE [i32 N | s16 STR] ...]", 1)

    def _cmd_test(self, args: list[str], stdin: bytes) -> bytes:
        """``[ EXPR ]`` / ``test EXPR``: -e/-f/-d/-s on paths, -z/-n, = and != on strings, ! negation."""
        if args and args[-1] == "]":
            args = args[:-1]
        negate = False
        if args[:1] == ["!"]:
            negate, args = True, args[1:]
        fs = self.phone.files
        if not args:
            result = False
        elif len(args) == 1:
            result = bool(args[0])
        elif len(args) == 2 and args[0] in ("-e", "-f", "-d", "-s", "-r", "-w", "-z", "-n"):
            op, value = args
            if op == "-z":
                result = not value
            elif op == "-n":
                result = bool(value)
            elif op == "-d":
                result = fs.is_dir(value)
            elif op == "-f":
                result = fs.is_file(value)
            elif op == "-s":
                result = fs.is_file(value) and bool(fs.read(value))
            else:
                result = fs.exists(value)
        elif len(args) == 3 and args[1] in ("=", "==", "!="):
            result = (args[0] == args[2]) != (args[1] == "!=")
        else:
            raise ShellExit(f"test: unsupported expression {' '.join(args)!r}", 2)
        if result == negate:
            raise ShellExit("", 1)
        return b""

    def _cmd_find(self, args: list[str], stdin: bytes) -> bytes:
        """``find PATH... [-mindepth N] [-maxdepth N] [-type f|d [-o -type f|d]] [-name GLOB] [-delete]``."""
        fs = self.phone.files
        roots: list[str] = []
        types: set[str] = set()
        names: list[str] = []
        mindepth, maxdepth, delete = 0, 1 << 30, False
        i = 0
        while i < len(args):
            a = args[i]
            if a in ("-mindepth", "-maxdepth", "-type", "-name", "-iname") and i + 1 < len(args):
                value = args[i + 1]
                if a == "-mindepth":
                    mindepth = int(value)
                elif a == "-maxdepth":
                    maxdepth = int(value)
                elif a == "-type":
                    types.add(value)
                else:
                    names.append(value.lower() if a == "-iname" else value)
                i += 2
                continue
            if a == "-delete":
                delete = True
            elif a in ("-o", "-or", "-print"):
                pass
            elif a.startswith("-"):
                raise ShellExit(f"find: unknown argument '{a}'", 1)
            else:
                roots.append(a)
            i += 1
        found: list[str] = []
        for root in roots or ["."]:
            if not fs.exists(root):
                raise ShellExit(f"find: '{root}': No such file or directory", 1)
            base = fs.norm(root)
            shown = root.rstrip("/") or "/"
            everything = [base] + sorted(d for d in fs.dirs if d.startswith(base.rstrip("/") + "/")) + (
                fs.walk_files(base) if fs.is_dir(base) else [])
            for path in sorted(set(everything)):
                rel = path[len(base):].strip("/")
                depth = rel.count("/") + 1 if rel else 0
                kind = "d" if fs.is_dir(path) else "f"
                leaf = posixpath.basename(path)
                if depth < mindepth or depth > maxdepth or (types and kind not in types):
                    continue
                if names and not any(fnmatch.fnmatchcase(leaf.lower() if n.islower() else leaf, n) for n in names):
                    continue
                found.append(path if not rel else f"{shown}/{rel}")
        if delete:
            for path in sorted(found, key=len, reverse=True):  # deepest first; a folder goes only when empty
                if fs.is_file(path) or (fs.is_dir(path) and not fs.listdir(path) and fs.norm(path) != "/"):
                    fs.remove(path, recursive=True)
            self.phone.invalidate()
            return b""
        return "".join(f"{p}\n" for p in found).encode()

    def _cmd_sqlite3(self, args: list[str], stdin: bytes) -> bytes:
        """``sqlite3 DB "SQL"``: run SQL on a database file; a change to an app's database reaches the app."""
        from android_gym.sim.databases import run_sql

        words = [a for a in args if not a.startswith("-")]
        if not words:
            raise ShellExit("usage: sqlite3 DATABASE [SQL]", 1)
        path, sql = words[0], " ".join(words[1:]) or stdin.decode("utf-8", "replace")
        fs = self.phone.files
        data = fs.read(path) if fs.exists(path) else b""
        try:
            output, changed = run_sql(data, sql)
        except ValueError as exc:
            raise ShellExit(f"{exc}", 1) from None
        if changed is not None:
            fs.write(path, changed, self.phone.clock_ms)
            self.phone.file_changed(path)
        return output.encode()

    def _cmd_keep_files(self, args: list[str], stdin: bytes) -> bytes:
        """``chmod``/``chown``/``restorecon``: the simulated files have no modes or labels; paths must exist."""
        paths = [a for a in args if a.startswith("/")]
        for path in paths:
            if not self.phone.files.exists(path):
                raise ShellExit(f"{path}: No such file or directory", 1)
        return b""

    def _cmd_echo(self, args: list[str], stdin: bytes) -> bytes:
        newline = True
        if args[:1] == ["-n"]:
            newline, args = False, args[1:]
        return (" ".join(args) + ("\n" if newline else "")).encode()

    def _cmd_cat(self, args: list[str], stdin: bytes) -> bytes:
        if not args:
            return stdin
        return b"".join(self.phone.files.read(a) for a in args)

    def _cmd_ls(self, args: list[str], stdin: bytes) -> bytes:
        fs = self.phone.files
        flags = "".join(a[1:] for a in args if a.startswith("-"))
        paths = [a for a in args if not a.startswith("-")] or ["/"]
        full = flags.count("l") > 1 or "--full-time" in args  # toybox: -ll shows full times
        out: list[str] = []
        for path in paths:
            if not fs.exists(path):
                raise ShellExit(f"ls: {path}: No such file or directory", 1)
            if fs.is_file(path):
                out.append(self._ls_line(path, path, full) if "l" in flags else path)
                continue
            names = fs.listdir(path)
            if len(paths) > 1:
                out.append(f"{path}:")
            for n in names:
                full_path = path.rstrip("/") + "/" + n
                out.append(self._ls_line(full_path, n, full) if "l" in flags else n)
        return ("\n".join(out) + ("\n" if out else "")).encode()

    def _ls_line(self, path: str, name: str, full_time: bool = False) -> str:
        fs = self.phone.files
        if fs.is_dir(path):
            stamp = "2023-10-15 15:34:00.000000000 +0000" if full_time else "2023-10-15 15:34"
            return f"drwxrwx--x 2 root sdcard_rw 4096 {stamp} {name}"
        size = len(fs.read(path))
        when = START_TIME + _dt.timedelta(milliseconds=fs.mtimes.get(fs.norm(path), 0))
        if full_time:
            return f"-rw-rw---- 1 u0_a158 media_rw {size} {when:%Y-%m-%d %H:%M:%S}.{when.microsecond:06d}000 +0000 {name}"
        return f"-rw-rw---- 1 root sdcard_rw {size} {when:%Y-%m-%d %H:%M} {name}"

    def _cmd_rm(self, args: list[str], stdin: bytes) -> bytes:
        flags = "".join(a[1:] for a in args if a.startswith("-"))
        for path in (a for a in args if not a.startswith("-")):
            try:
                self.phone.files.remove(path, recursive="r" in flags or "R" in flags)
            except FileSystemError as exc:
                if "f" not in flags or "No such file" not in str(exc):
                    raise ShellExit(f"rm: {exc}", 1) from None
        self.phone.invalidate()
        return b""

    def _cmd_mkdir(self, args: list[str], stdin: bytes) -> bytes:
        parents = "-p" in args
        for path in (a for a in args if not a.startswith("-")):
            if self.phone.files.exists(path):
                if parents:
                    continue
                raise ShellExit(f"mkdir: '{path}': File exists", 1)
            self.phone.files.mkdir(path, parents=parents)
        self.phone.invalidate()
        return b""

    def _cmd_cp(self, args: list[str], stdin: bytes) -> bytes:
        flags = "".join(a[1:] for a in args if a.startswith("-"))
        paths = [a for a in args if not a.startswith("-")]
        if len(paths) < 2:
            raise ShellExit("usage: cp [-r|-a] SOURCE... DEST", 1)
        fs = self.phone.files
        *sources, dest = paths
        for src in sources:
            if fs.is_dir(src):
                if not any(f in flags for f in "raR"):
                    raise ShellExit(f"cp: Skipped dir '{src}'", 1)
                contents_only = src.rstrip("/").endswith("/.")
                target = dest if contents_only or not fs.is_dir(dest) else posixpath.join(
                    dest, posixpath.basename(fs.norm(src)))
                fs.copy_tree(src, target)
            else:
                fs.copy(src, dest)
            self.phone.file_changed(dest)
        self.phone.invalidate()
        return b""

    def _cmd_mv(self, args: list[str], stdin: bytes) -> bytes:
        paths = [a for a in args if not a.startswith("-")]
        if len(paths) != 2:
            raise ShellExit("usage: mv SOURCE DEST", 1)
        self.phone.files.move(*paths)
        self.phone.invalidate()
        return b""

    def _broadcast(self, args: list[str]) -> bytes:
        """``am broadcast``; the Clipper app's ``clipper.set -e text X`` / ``clipper.get`` (what AndroidWorld uses)."""
        action = None
        extras: dict[str, str] = {}
        i = 0
        while i < len(args):
            if args[i] == "-a" and i + 1 < len(args):
                action = args[i + 1]
                i += 2
            elif args[i] in ("-e", "--es") and i + 2 < len(args):
                extras[args[i + 1]] = args[i + 2]
                i += 3
            else:
                i += 1
        head = f"Broadcasting: Intent {{ act={action} }}\n" if action else "Broadcasting: Intent { }\n"
        if action == "clipper.set":
            self.phone.set_clipboard(extras.get("text", ""))
            self.phone.invalidate()
            return (head + "Broadcast completed: result=-1, data=\"Text is copied into clipboard.\"\n").encode()
        if action == "clipper.get":
            return (head + f'Broadcast completed: result=-1, data="{self.phone.clipboard}"\n').encode()
        return (head + "Broadcast completed: result=0\n").encode()

    def _cmd_touch(self, args: list[str], stdin: bytes) -> bytes:
        """``touch [-d 'YYYY-MM-DD hh:mm[:ss]' | -t [[CC]YY]MMDDhhmm[.ss]] FILE...`` (mtime on the phone's clock)."""
        fs = self.phone.files
        mtime = self.phone.clock_ms
        paths: list[str] = []
        i = 0
        while i < len(args):
            if args[i] in ("-d", "-t") and i + 1 < len(args):
                mtime = self._parse_touch_time(args[i], args[i + 1])
                i += 2
            elif args[i].startswith("-"):
                i += 1
            else:
                paths.append(args[i])
                i += 1
        for path in paths:
            if fs.exists(path) and fs.is_file(path):
                fs.write(path, fs.read(path), mtime)
            elif not fs.exists(path):
                fs.write(path, b"", mtime)
        self.phone.invalidate()
        return b""

    def _parse_touch_time(self, flag: str, value: str) -> int:
        """Milliseconds on the phone clock (0 = the frozen start time) for touch's -d/-t value."""
        formats = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S") if flag == "-d" else (
            "%Y%m%d%H%M.%S", "%Y%m%d%H%M", "%y%m%d%H%M.%S", "%y%m%d%H%M")
        for fmt in formats:
            try:
                when = _dt.datetime.strptime(value, fmt)
            except ValueError:
                continue
            return int((when - START_TIME.replace(tzinfo=None)).total_seconds() * 1000)
        raise ShellExit(f"touch: invalid date '{value}'", 1)

    def _cmd_sleep(self, args: list[str], stdin: bytes) -> bytes:
        try:
            seconds = float(args[0]) if args else 0.0
        except ValueError:
            raise ShellExit(f"sleep: invalid number '{args[0]}'", 1) from None
        self.phone.advance_clock(int(seconds * 1000))
        return b""

    def _cmd_false(self, args: list[str], stdin: bytes) -> bytes:
        raise ShellExit("", 1)

    def _cmd_grep(self, args: list[str], stdin: bytes) -> bytes:
        flags = "".join(a[1:] for a in args if a.startswith("-") and len(a) > 1)
        words = [a for a in args if not (a.startswith("-") and len(a) > 1)]
        if not words:
            raise ShellExit("usage: grep [-iv] PATTERN [FILE...]", 2)
        pattern, files = words[0], words[1:]
        data = b"".join(self.phone.files.read(f) for f in files) if files else stdin
        try:
            rx = re.compile(pattern if ("E" in flags or "e" in flags) else pattern.replace("\\|", "|"),
                            re.IGNORECASE if "i" in flags else 0)
        except re.error as exc:
            raise ShellExit(f"grep: bad regex {pattern!r}: {exc}", 2) from None
        lines = [ln for ln in data.decode("utf-8", "replace").splitlines() if bool(rx.search(ln)) != ("v" in flags)]
        if not lines:
            raise ShellExit("", 1)
        if "c" in flags:
            return f"{len(lines)}\n".encode()
        return ("\n".join(lines) + "\n").encode()

    def _count(self, args: list[str]) -> int:
        for i, a in enumerate(args):
            if a == "-n" and i + 1 < len(args):
                return int(args[i + 1])
            if a.startswith("-") and a[1:].isdigit():
                return int(a[1:])
        return 10

    def _cmd_head(self, args: list[str], stdin: bytes) -> bytes:
        lines = stdin.decode("utf-8", "replace").splitlines(keepends=True)
        return "".join(lines[: self._count(args)]).encode()

    def _cmd_tail(self, args: list[str], stdin: bytes) -> bytes:
        lines = stdin.decode("utf-8", "replace").splitlines(keepends=True)
        n = self._count(args)
        return "".join(lines[-n:] if n else []).encode()

    def _cmd_wc(self, args: list[str], stdin: bytes) -> bytes:
        text = stdin.decode("utf-8", "replace")
        if "-l" in args:
            return f"{text.count(chr(10))}\n".encode()
        return f"{text.count(chr(10))} {len(text.split())} {len(stdin)}\n".encode()
