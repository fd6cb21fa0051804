#!/usr/bin/env python3
"""An S3-compatible server on loopback for tests and benchmarks: moto's server mode in a
subprocess.

As a module:

    from s3_server import S3Server
    with S3Server() as server:              # moto on a free 127.0.0.1 port
        server.make_bucket("data")
        env = server.env()                  # AWS_ENDPOINT_URL, keys, region, no profiles
        subprocess.run(cmd, env=server.merged_env())

As a command (ctest runs the C++ tests of the S3 store through it):

    python tests/s3/s3_server.py [--bucket NAME ...] [--no-auth-actions N]
                                 [--faults KIND=P,... [--fault-seed N]] -- CMD ARGS...

starts the server, makes the buckets (default: one named tessera-test), runs CMD with
server.env() merged into the environment plus TESSERA_TEST_S3_ENDPOINT (the endpoint CMD
is to use, also AWS_ENDPOINT_URL), TESSERA_TEST_S3_SERVER_ENDPOINT (the server's own) and
TESSERA_TEST_S3_BUCKET (the first bucket), stops the server, and exits with CMD's status
(128 + N when a signal N ended it; 125 when the server did not start, 2 for bad options).
With --faults, CMD talks to the server through a FaultProxy (fault_proxy.py) injecting
those faults ("slowdown=0.05,reset=0.01"; "none": none, only keep-alive), whose counters
are printed on stderr at the end; --fault-methods, --fault-match and --fault-pass-first
choose the requests that may get one (FaultProxy's methods, match, pass_first).
When CMD fails (a status other than 0) the server's log is kept and its path printed.
Neither the server nor CMD outlives the harness: both get SIGTERM when it dies, even by
SIGKILL (Linux's PR_SET_PDEATHSIG).

Credentials. By default moto checks no signature: any key and secret are accepted, and
env() hands out "testing"/"testing". With no_auth_actions=N (--no-auth-actions N) the
server checks every request after the next N: the harness first makes an IAM user allowed
every action and an access key for it (env() hands that key out, so correctly signed
requests succeed), then sets moto's INITIAL_NO_AUTH_ACTION_COUNT to N through its
/moto-api/reset-auth endpoint, which also restarts moto's count. A request signed with
another secret is then refused with 403 SignatureDoesNotMatch, an unknown key with 403
InvalidAccessKeyId. (Putting INITIAL_NO_AUTH_ACTION_COUNT in the server's environment,
server_env={"INITIAL_NO_AUTH_ACTION_COUNT": "0"}, does the same from the first request,
but then no key is valid: moto knows only the keys of its IAM users.) The command line
sets the count after making the buckets, so N counts CMD's requests only.

The server's output goes to a log file (server.log_path), removed when the server stops
unless keep_log=True (or keep_log_file() was called) or the server failed to start (the
error names it).
"""
import argparse
import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

REGION = "us-east-1"
ACCESS_KEY_ID = "testing"
SECRET_ACCESS_KEY = "testing"

# Variables that would make an AWS client look elsewhere than env() says (profiles,
# session tokens, roles, service-specific endpoints, instance metadata). env() cannot
# express removal, so merged_env() and the pytest fixture drop these.
UNSET_VARIABLES = (
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_ENDPOINT_URL_S3",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
    "AWS_S3_USE_ARN_REGION",
    "AWS_USE_FIPS_ENDPOINT",
    "AWS_USE_DUALSTACK_ENDPOINT",
)

# The IAM policy of the user made for authenticated servers: every action allowed.
ALLOW_ALL_POLICY = json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
})

START_ATTEMPTS = 5  # a free port can be taken between finding it and moto binding it


class S3ServerError(RuntimeError):
    """The server did not start, or stopped answering."""


def free_port(host="127.0.0.1"):
    """A port nothing listens on now (the kernel's pick for port 0); another process may
    still take it before it is used: callers retry."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def _die_with_parent_of(parent_pid):
    """A preexec_fn: the child gets SIGTERM when the thread that started it dies (Linux's
    PR_SET_PDEATHSIG), so a killed test run (even by SIGKILL) leaves no server behind. A
    parent that died between the fork and the prctl is seen by getppid(): the child ends
    at once. libc is loaded here, in the parent: between fork and exec the child only
    calls it (no import, which another thread of the parent may have held locked)."""
    try:
        import ctypes
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except Exception:  # not Linux, or no prctl: the server is still stopped on exit
        return None

    def preexec():
        prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG = 1
        if os.getppid() != parent_pid:
            os._exit(1)
    return preexec


def _listening_inodes(port):
    """The inodes of the sockets listening on TCP `port` (any address), from Linux's
    /proc/net/tcp{,6}; None where /proc cannot tell."""
    inodes = set()
    found_table = False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as lines:
                next(lines, None)  # the header
                found_table = True
                for line in lines:
                    fields = line.split()
                    if len(fields) < 10 or fields[3] != "0A":  # 0A: LISTEN
                        continue
                    if int(fields[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(fields[9])
        except OSError:
            continue
    return inodes if found_table else None


def _listens(pid, port):
    """Whether process `pid` holds a socket listening on `port`: True, False, or None where
    /proc cannot tell (not Linux)."""
    inodes = _listening_inodes(port)
    if inodes is None:
        return None
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    for descriptor in descriptors:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{descriptor}")
        except OSError:
            continue  # closed meanwhile
        if link.startswith("socket:[") and link[8:-1] in inodes:
            return True
    return False


class S3Server:
    """moto's S3-compatible server on a free loopback port, for the time of a `with`.

    python: the interpreter that runs moto (default: this one).
    no_auth_actions: None (default) checks no credentials; N checks every request after
      the next N, with an IAM user's key handed out by env() (see the module's docstring).
    moto_settings: MOTO_* (or other) variables for the server's environment, e.g.
      {"MOTO_S3_DEFAULT_MAX_KEYS": "50"}; server_env is merged after them.
    startup_timeout: seconds to wait for the server to answer.
    keep_log: keep the server's log file after it stops.
    die_with_parent: the server gets SIGTERM when the starting thread dies (Linux).

    Ready means moto answers on the port and the socket listening there is this server
    process's own (checked in /proc on Linux), so that under ctest -j another moto that
    took the port first is never mistaken for ours: ours then fails to bind, and start()
    tries the next free port.
    """

    def __init__(self, *, python=None, no_auth_actions=None, moto_settings=None,
                 server_env=None, startup_timeout=30.0, stop_timeout=10.0, keep_log=False,
                 die_with_parent=True, host="127.0.0.1"):
        self.python = python or sys.executable
        self.no_auth_actions = no_auth_actions
        self.moto_settings = dict(moto_settings or {})
        self.server_env = dict(server_env or {})
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.keep_log = keep_log
        self.die_with_parent = die_with_parent
        self.host = host
        self.port = None
        self.process = None
        self.log_path = None
        self.access_key_id = ACCESS_KEY_ID
        self.secret_access_key = SECRET_ACCESS_KEY
        self._private_dir = None
        self._log_file = None
        self._failed = False

    # ---- lifetime --------------------------------------------------------------------

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()
        return False

    @property
    def endpoint(self):
        if self.port is None:
            raise S3ServerError("the S3 server is not running")
        return f"http://{self.host}:{self.port}"

    def start(self):
        if self.process is not None:
            raise S3ServerError("the S3 server is already running")
        self._private_dir = tempfile.mkdtemp(prefix="tessera-s3-server-")
        self.log_path = os.path.join(self._private_dir, "moto.log")
        self._log_file = open(self.log_path, "ab")
        last_error = None
        try:
            for attempt in range(START_ATTEMPTS):
                port = free_port(self.host)
                try:
                    self._launch(port)
                    break
                except _PortTaken as error:  # raced with another process: next port
                    last_error = error
                    continue
            else:
                raise S3ServerError(
                    f"moto's server could not bind a free port on {self.host} in "
                    f"{START_ATTEMPTS} attempts; last: {last_error}; log {self.log_path}:\n"
                    f"{self.log_tail()}")
            if self.no_auth_actions is not None:
                self.make_iam_user()
                self.require_auth(after=self.no_auth_actions)
        except BaseException:
            self._failed = True
            self.stop()
            raise
        return self

    def _launch(self, port):
        # moto itself runs botocore (signature checks): none of the machine's AWS
        # settings may reach it (a missing AWS_PROFILE turns every check into a 500).
        env = {name: value for name, value in os.environ.items()
               if not name.startswith("AWS_") and name not in (
                   "TEST_SERVER_MODE", "MOTO_PORT", "INITIAL_NO_AUTH_ACTION_COUNT")}
        missing = os.path.join(self._private_dir, "no-such-dir", "aws")
        env.update(AWS_CONFIG_FILE=missing + "-config",
                   AWS_SHARED_CREDENTIALS_FILE=missing + "-credentials",
                   AWS_EC2_METADATA_DISABLED="true")
        env.update(self.moto_settings)
        env.update(self.server_env)
        env["PYTHONUNBUFFERED"] = "1"
        command = [self.python, "-m", "moto.server", "-H", self.host, "-p", str(port)]
        self._log_file.write(f"$ {' '.join(command)}\n".encode())
        self._log_file.flush()
        start_offset = self._log_file.tell()
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=self._log_file,
            stderr=subprocess.STDOUT, env=env, cwd=self._private_dir,
            start_new_session=True,  # Ctrl-C in a terminal reaches the test, not moto
            preexec_fn=_die_with_parent_of(os.getpid()) if self.die_with_parent else None)
        deadline = time.monotonic() + self.startup_timeout
        while True:
            code = process.poll()
            if code is not None:
                output = self._log_since(start_offset)
                if "Address already in use" in output or "is in use by another program" in output:
                    raise _PortTaken(f"port {port} taken")
                raise S3ServerError(
                    f"moto's server exited with status {code} before answering "
                    f"({' '.join(command)}); log {self.log_path}:\n{self.log_tail()}")
            if _is_moto(self.host, port):
                ours = _listens(process.pid, port)
                if ours is None:  # no /proc: at least ours must still be running
                    time.sleep(0.2)
                    ours = process.poll() is None
                if ours and process.poll() is None:
                    break
                # Another server answers on the port: ours is about to fail binding it
                # (the loop above sees it exit), unless it outlives the deadline.
            if time.monotonic() > deadline:
                _stop_process(process, self.stop_timeout)
                raise S3ServerError(
                    f"moto's server did not answer on {self.host}:{port} within "
                    f"{self.startup_timeout:g} s ({' '.join(command)}); log "
                    f"{self.log_path}:\n{self.log_tail()}")
            time.sleep(0.05)
        self.process = process
        self.port = port

    def keep_log_file(self):
        """Keeps the log file when the server stops (for a failure to be read later)."""
        self.keep_log = True

    def stop(self):
        process, self.process = self.process, None
        if process is not None:
            _stop_process(process, self.stop_timeout)
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if self._private_dir is not None and not (self.keep_log or self._failed):
            shutil.rmtree(self._private_dir, ignore_errors=True)
            self.log_path = None
        self._private_dir = None
        self.port = None

    def log_tail(self, lines=40):
        """The last lines of the server's log."""
        if not self.log_path or not os.path.exists(self.log_path):
            return "(no log)"
        if self._log_file is not None:
            self._log_file.flush()
        with open(self.log_path, "rb") as log:
            text = log.read().decode(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def _log_since(self, offset):
        self._log_file.flush()
        with open(self.log_path, "rb") as log:
            log.seek(offset)
            return log.read().decode(errors="replace")

    # ---- what clients need -------------------------------------------------------------

    def env(self, endpoint=None):
        """The variables an AWS client (boto3, s3fs, obstore, Tessera) needs to reach this
        server: endpoint (default this server's; give a FaultProxy's to go through it),
        keys, region, and credential/config files that do not exist (so no profile of the
        machine's ~/.aws is read). Variables to remove: UNSET_VARIABLES (merged_env()
        applies both)."""
        missing = os.path.join(self._private_dir or tempfile.gettempdir(),
                               "no-such-dir", "aws")
        return {
            "AWS_ENDPOINT_URL": endpoint or self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret_access_key,
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_SHARED_CREDENTIALS_FILE": missing + "-credentials",
            "AWS_CONFIG_FILE": missing + "-config",
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_ALLOW_HTTP": "true",  # object_store (obstore) refuses http:// without it
        }

    def merged_env(self, base=None, endpoint=None, **extra):
        """`base` (default os.environ) without UNSET_VARIABLES, with env() and `extra`."""
        merged = dict(os.environ if base is None else base)
        for name in UNSET_VARIABLES:
            merged.pop(name, None)
        merged.update(self.env(endpoint))
        merged.update(extra)
        return merged

    def client(self, service="s3", endpoint=None, **config):
        """A boto3 client of this server with env()'s credentials (path-style addressing);
        `config`: botocore Config arguments (e.g. retries={"total_max_attempts": 1})."""
        import boto3
        import botocore.session
        from botocore.config import Config
        settings = {"s3": {"addressing_style": "path"}}
        settings.update(config)
        # Nothing of the environment's AWS settings (AWS_PROFILE, ~/.aws) reaches it.
        missing = os.path.join(self._private_dir or tempfile.gettempdir(), "no-such-dir", "aws")
        core = botocore.session.Session(session_vars={
            # (config file name, environment variables, default, conversion)
            "profile": (None, None, None, None),
            "config_file": (None, None, missing + "-config", None),
            "credentials_file": (None, None, missing + "-credentials", None),
        })
        return boto3.session.Session(botocore_session=core).client(
            service, endpoint_url=endpoint or self.endpoint, region_name=REGION,
            aws_access_key_id=self.access_key_id,
            aws_secret_access_key=self.secret_access_key, config=Config(**settings))

    def make_bucket(self, name):
        """Creates bucket `name` (an existing one of ours is fine); returns the name."""
        s3 = self.client()
        try:
            s3.create_bucket(Bucket=name)
        except s3.exceptions.BucketAlreadyOwnedByYou:
            pass
        return name

    def list_keys(self, bucket, prefix=""):
        """Every key under `prefix` in `bucket`, sorted."""
        s3 = self.client()
        keys = []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket,
                                                                 Prefix=prefix):
            keys.extend(item["Key"] for item in page.get("Contents", []))
        return sorted(keys)

    def require_auth(self, after=0):
        """From now on moto checks the signature of every request after the next `after`
        (moto's INITIAL_NO_AUTH_ACTION_COUNT, set through /moto-api/reset-auth, which also
        restarts its count). Sign with env()'s key: make_iam_user() first; after=None
        turns the checks off again."""
        value = "inf" if after is None else str(after)
        status, body = _request(self.host, self.port, "POST", "/moto-api/reset-auth",
                                value.encode())
        if status != 200:
            raise S3ServerError(f"moto refused reset-auth {value}: {status} {body[:200]!r}")

    def make_iam_user(self, name="tessera-test"):
        """An IAM user allowed every action, and its key as this server's credentials
        (moto checks signatures against its IAM users' keys only)."""
        iam = self.client("iam")
        iam.create_user(UserName=name)
        iam.put_user_policy(UserName=name, PolicyName="allow-all",
                            PolicyDocument=ALLOW_ALL_POLICY)
        key = iam.create_access_key(UserName=name)["AccessKey"]
        self.access_key_id = key["AccessKeyId"]
        self.secret_access_key = key["SecretAccessKey"]


class _PortTaken(Exception):
    pass


def _request(host, port, method, path, body=None, timeout=2.0):
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.request(method, path, body=body)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _is_moto(host, port):
    """Whether moto answers on host:port. GET /moto-api/reset is moto's own endpoint,
    answered 400 "Need to POST to reset Moto" without counting as a request for
    INITIAL_NO_AUTH_ACTION_COUNT (and without resetting anything)."""
    try:
        status, body = _request(host, port, "GET", "/moto-api/reset", timeout=1.0)
    except (OSError, http.client.HTTPException):
        return False
    return status == 400 and b"reset Moto" in body


def _stop_process(process, timeout):
    """SIGTERM, then SIGKILL after `timeout` seconds."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            process.wait()


# ---- the command line ------------------------------------------------------------------

def _parse(argv):
    if "--" in argv:
        split = argv.index("--")
        options, command = argv[:split], argv[split + 1:]
    else:
        options, command = argv, []
    parser = argparse.ArgumentParser(
        prog="s3_server.py",
        usage="%(prog)s [--bucket NAME ...] [--no-auth-actions N] [--faults KIND=P,...] "
              "[--keep-log] -- CMD ARGS...",
        description="Runs CMD against moto's S3 server on a free loopback port (see the "
                    "module's docstring).")
    parser.add_argument("--bucket", action="extend", nargs="+", default=[],
                        help="bucket(s) to make before CMD (default: tessera-test); the "
                             "first is TESSERA_TEST_S3_BUCKET")
    parser.add_argument("--no-auth-actions", type=int, default=None, metavar="N",
                        help="check credentials on every request of CMD after its first N "
                             "(an IAM user's key is handed out)")
    parser.add_argument("--keep-log", action="store_true",
                        help="keep the server's log (its path is printed)")
    parser.add_argument("--moto-setting", action="append", default=[], metavar="NAME=VALUE",
                        help="a variable of the server's environment (MOTO_...)")
    parser.add_argument("--faults", default=None, metavar="KIND=P,...",
                        help="put a fault proxy (fault_proxy.py) with these rates between "
                             "CMD and the server; '' or 'none' for one injecting nothing "
                             "(it still keeps connections alive, which moto does not)")
    parser.add_argument("--fault-seed", type=int, default=0)
    parser.add_argument("--fault-delay-s", type=float, default=0.2)
    parser.add_argument("--fault-methods", default=None, metavar="GET,PUT",
                        help="faults only on these methods")
    parser.add_argument("--fault-match", default=None, metavar="REGEX",
                        help="faults only on targets whose path this is found in ('chunks': "
                             "Zarr chunk keys)")
    parser.add_argument("--fault-pass-first", type=int, default=0, metavar="N",
                        help="the first N requests that may get a fault go through untouched")
    args = parser.parse_args(options)
    if not command:
        parser.error("no command: give it after --")
    settings = {}
    for item in args.moto_setting:
        name, equals, value = item.partition("=")
        if not equals:
            parser.error(f"--moto-setting {item!r}: expected NAME=VALUE")
        settings[name] = value
    return args, command, settings


def main(argv=None):
    args, command, settings = _parse(sys.argv[1:] if argv is None else argv)
    buckets = args.bucket or ["tessera-test"]
    rates = None
    if args.faults is not None:
        from fault_proxy import FaultProxy, parse_rates
        try:
            rates = {} if args.faults.strip().lower() in ("", "none") else parse_rates(
                args.faults)
            FaultProxy._checked(rates)
        except ValueError as error:
            print(f"s3_server.py: --faults: {error}", file=sys.stderr)
            return 2
    child = None
    proxy = None
    received = []
    failed = False

    def forward(signum, frame):  # ctest's timeout or Ctrl-C: pass it on, then clean up
        received.append(signum)
        if child is not None and child.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT,
                                                              signal.SIGHUP)}
    server = S3Server(moto_settings=settings, keep_log=args.keep_log)
    try:
        server.start()
        if args.no_auth_actions is not None:
            server.make_iam_user()
        for bucket in buckets:
            server.make_bucket(bucket)
        if args.no_auth_actions is not None:
            server.require_auth(after=args.no_auth_actions)
        if received:
            return 128 + received[0]
        endpoint = server.endpoint
        if rates is not None:
            from fault_proxy import FaultProxy, filter_options
            proxy = FaultProxy(server.endpoint, seed=args.fault_seed, rates=rates,
                               delay_s=args.fault_delay_s,
                               **filter_options(args.fault_methods, args.fault_match,
                                                args.fault_pass_first)).start()
            endpoint = proxy.endpoint
        env = server.merged_env(endpoint=endpoint, TESSERA_TEST_S3_ENDPOINT=endpoint,
                                TESSERA_TEST_S3_SERVER_ENDPOINT=server.endpoint,
                                TESSERA_TEST_S3_BUCKET=buckets[0])
        try:
            # The command ends with this harness too, even when it is killed (SIGKILL
            # from a test driver's timeout): PR_SET_PDEATHSIG.
            child = subprocess.Popen(command, env=env,
                                     preexec_fn=_die_with_parent_of(os.getpid()))
        except OSError as error:
            print(f"s3_server.py: cannot run {command[0]!r}: {error}", file=sys.stderr)
            return 127
        while True:
            try:
                code = child.wait()
                break
            except InterruptedError:
                continue
        status = 128 - code if code < 0 else code
        if status != 0:
            failed = True
        return status
    except S3ServerError as error:
        print(f"s3_server.py: {error}", file=sys.stderr)
        failed = True
        return 125
    except BaseException:
        failed = True
        raise
    finally:
        if child is not None and child.poll() is None:
            _stop_process(child, 10.0)
        if proxy is not None:
            proxy.close()
            print(f"s3_server.py: fault proxy {json.dumps(proxy.stats())}", file=sys.stderr)
        if failed:
            server.keep_log_file()  # the server's side of the failure, for whoever reads it
        if (args.keep_log or failed) and server.log_path:
            print(f"s3_server.py: server log {server.log_path}"
                  + (" (kept: the command failed)" if failed and not args.keep_log else ""),
                  file=sys.stderr)
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main())
