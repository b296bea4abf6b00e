"""Google credentials, from the sources pulumi-gcp reads, in its order: the one place every
Google client of the package (JobService, Cloud Logging, the catalogs) gets its
credentials from.

The sources, as pulumi-gcp's provider (the Terraform google provider under it) reads them.
Its configure, ``google/provider/provider.go`` of hashicorp/terraform-provider-google,
reads ``access_token`` and ``credentials`` from the provider's config, and "only check[s]
environment variables if neither value was set in config - this means config beats env
var in all cases"; its ``Config.GetCredentials`` (``google/transport/config.go``) then
uses the access token if there is one, else the credentials JSON, else Application
Default Credentials, and impersonates ``impersonate_service_account`` on top of
whichever it used ("If both are specified, `access_token` will be used over the
`credentials` field": the provider reference, ``website/docs/guides/
provider_reference.html.markdown``; pulumi-gcp's configuration page lists the same keys
and variables, ``docs/installation-configuration.md`` of pulumi/pulumi-gcp). Here:

1. ``vertex-training:accessToken`` and ``vertex-training:credentials`` (the dynamic
   resources' stack config, or the plugin's provider config). If neither is set, the
   variables ``GOOGLE_OAUTH_ACCESS_TOKEN`` (what Pulumi ESC's ``gcp-login`` sets) and
   ``GOOGLE_CREDENTIALS``, ``GOOGLE_CLOUD_KEYFILE_JSON``, ``GCLOUD_KEYFILE_JSON`` (the
   first set).
2. Of those, the access token wins over the credentials JSON. A token is used as it is
   (it cannot be refreshed: it works until it expires, an hour for most). Credentials
   are the path to, or the contents of, a service account key, an external account
   configuration (Workload Identity Federation), an authorized user or an impersonated
   service account file, loaded by its own type's loader (never a type not listed).
3. Neither: Application Default Credentials (``google.auth.default``:
   ``GOOGLE_APPLICATION_CREDENTIALS``, gcloud's application default login, the
   metadata server).
4. ``vertex-training:impersonateServiceAccount``, else ``GOOGLE_IMPERSONATE_SERVICE_ACCOUNT``:
   the calls are made as that service account, with the credentials above as the source
   (which needs ``roles/iam.serviceAccountTokenCreator`` on it).

A loopback endpoint (a fake of ``vertex_training.testing``) gets no credentials unless
one is configured (1 or 4): step 3 is skipped, as before, so no test looks for
Application Default Credentials. gRPC sends call credentials over a secure channel only:
``loopback_channel`` makes a local one (``grpc.local_channel_credentials``, LOCAL_TCP),
which carries the token over the loopback connection without TLS.

Secrets: the values of ``accessToken`` and ``credentials`` never appear in a repr or a
message (``GoogleAuth``, ``Setting``); a message names where a value was read and what
to write instead. google-auth is imported on first use, never at import.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vertex_training.errors import CredentialsError
from vertex_training.keys import (
    ACCESS_TOKEN_KEY,
    CREDENTIALS_KEY,
    IMPERSONATE_SERVICE_ACCOUNT_KEY,
)

if TYPE_CHECKING:
    import grpc
    from google.auth.credentials import Credentials

#: The variables pulumi-gcp reads for each setting, in its order of precedence.
ACCESS_TOKEN_VARIABLES = ("GOOGLE_OAUTH_ACCESS_TOKEN",)
CREDENTIALS_VARIABLES = ("GOOGLE_CREDENTIALS", "GOOGLE_CLOUD_KEYFILE_JSON", "GCLOUD_KEYFILE_JSON")
IMPERSONATE_VARIABLES = ("GOOGLE_IMPERSONATE_SERVICE_ACCOUNT",)
#: Every variable ``resolve`` reads.
VARIABLES = (*ACCESS_TOKEN_VARIABLES, *CREDENTIALS_VARIABLES, *IMPERSONATE_VARIABLES)
#: The OAuth scopes the Terraform google provider asks for (``DefaultClientScopes``).
SCOPES = (
    "https://www.googleapis.com/auth/cloud-platform",
    "https://www.googleapis.com/auth/userinfo.email",
)
#: How long an impersonated token lives before it is made again, in seconds (the IAM
#: Credentials API's default, and its most without an organization policy).
IMPERSONATION_LIFETIME_S = 3600
#: The ``type`` of each credentials JSON this module loads, and what it is.
CREDENTIAL_TYPES = {
    "service_account": "a service account key",
    "external_account": "a Workload Identity Federation configuration",
    "authorized_user": "a user's application default login",
    "impersonated_service_account": "an impersonated service account configuration",
    "external_account_authorized_user": "a workforce identity federation login",
}
#: What gRPC says of a call whose credentials could not be had (the metadata plugin
#: raised: a token that could not be refreshed, an impersonation refused): nothing was
#: sent, so no retry can help.
METADATA_FAILURE = "Getting metadata from plugin failed"
#: What a secret value shows as.
HIDDEN = "[secret]"
#: How to give each setting its value, for the messages.
_HOW_TO_SET = {
    ACCESS_TOKEN_KEY: f"`pulumi config set --secret {ACCESS_TOKEN_KEY} <token>`",
    CREDENTIALS_KEY: f'`pulumi config set --secret {CREDENTIALS_KEY} "$(cat key.json)"`',
}


@dataclass(frozen=True)
class GoogleAuth:
    """The credential settings a provider was configured with (``ProviderSettings``):
    ``vertex-training:accessToken``, ``...:credentials`` (a path or the JSON) and
    ``...:impersonateServiceAccount``; "" for each not set. The variables are read later,
    by ``resolve``. The repr hides the token and the JSON."""

    access_token: str = ""
    credentials: str = ""
    impersonate_service_account: str = ""

    @classmethod
    def of(cls, access_token: Any, credentials: Any, impersonate: Any) -> GoogleAuth:
        """The settings from config values as a provider receives them: text, or an
        object for ``credentials`` (a YAML program may write the JSON as one)."""
        return cls(_text(access_token), _text(credentials), _text(impersonate))

    @classmethod
    def from_config(cls, get: Callable[[str], Any]) -> GoogleAuth:
        """From the stack config (``get`` reads a full key, as ``pulumi.dynamic.Config.get``)."""
        return cls.of(
            get(ACCESS_TOKEN_KEY), get(CREDENTIALS_KEY), get(IMPERSONATE_SERVICE_ACCOUNT_KEY)
        )

    def __repr__(self) -> str:
        return (
            f"GoogleAuth(access_token={_shown(self.access_token)}, "
            f"credentials={_shown(self.credentials)}, "
            f"impersonate_service_account={self.impersonate_service_account!r})"
        )


@dataclass(frozen=True)
class Setting:
    """One credential setting's value and where it was read: a config key, or a variable.
    The repr shows where only."""

    value: str = field(repr=False)
    source: str


@dataclass(frozen=True)
class Resolved:
    """The settings a client uses, each from its source (``resolve``); None for unset.
    Equal settings make equal ``Resolved``s: the key of a shared client."""

    access_token: Setting | None = None
    credentials: Setting | None = None
    impersonate_service_account: Setting | None = None

    @property
    def configured(self) -> bool:
        """Whether anything is set (else Application Default Credentials are used)."""
        return any((self.access_token, self.credentials, self.impersonate_service_account))

    def describe(self, *, loopback: bool = False) -> str:
        """Which credential the calls use, for a message: never its value. ``loopback``:
        the calls go to a loopback endpoint (which is sent none unless some are set)."""
        if self.access_token is not None:
            used = f"the access token of {self.access_token.source}"
        elif self.credentials is not None:
            used = f"the credentials of {self.credentials.source}"
        elif loopback and not self.configured:
            return "no credentials (none are set, and a loopback endpoint is sent no others)"
        else:
            used = "Application Default Credentials"
        if self.impersonate_service_account is not None:
            target = self.impersonate_service_account
            used += f", impersonating {target.value} ({target.source})"
        return used

    def build(self, *, loopback: bool = False) -> Credentials | None:
        """The google-auth credentials of these settings; None for a loopback endpoint
        given none. ``CredentialsError`` names the setting that cannot be used."""
        if loopback and not self.configured:
            return None
        if self.access_token is not None:
            source: Credentials = _token_credentials(self.access_token)
        elif self.credentials is not None:
            source = _json_credentials(self.credentials)
        else:
            source = _default_credentials()
        if self.impersonate_service_account is None:
            return source
        return _impersonated(source, self.impersonate_service_account)

    def refused(self, service: str, said: str, *, loopback: bool = False) -> str:
        """The message for calls Google refused (UNAUTHENTICATED, or credentials that
        could not be refreshed): what was used, what it said, and what to do."""
        if self.access_token is not None:
            fix = (
                "a token lasts about an hour: give a fresh one, or set "
                f"{CREDENTIALS_KEY} or Application Default Credentials, which refresh"
            )
        elif self.credentials is not None:
            fix = "check the key or configuration, and that its identity may call the API"
        else:
            fix = (
                "sign in again with `gcloud auth application-default login`, or set "
                f"{ACCESS_TOKEN_KEY} or {CREDENTIALS_KEY}"
            )
        if self.impersonate_service_account is not None:
            fix += (
                "; impersonating needs roles/iam.serviceAccountTokenCreator on "
                f"{self.impersonate_service_account.value}"
            )
        return f"{service} refused {self.describe(loopback=loopback)} ({said}): {fix}"


def resolve(auth: GoogleAuth | None = None, environ: Mapping[str, str] | None = None) -> Resolved:
    """The settings to use: ``auth``'s, and the variables where pulumi-gcp reads them (the
    access token and credentials only when ``auth`` sets neither)."""
    auth = auth or GoogleAuth()
    env = os.environ if environ is None else environ
    token = _setting(auth.access_token, ACCESS_TOKEN_KEY)
    keys = _setting(auth.credentials, CREDENTIALS_KEY)
    if token is None and keys is None:
        token = _variable(env, ACCESS_TOKEN_VARIABLES)
        keys = _variable(env, CREDENTIALS_VARIABLES)
    impersonate = _setting(
        auth.impersonate_service_account, IMPERSONATE_SERVICE_ACCOUNT_KEY
    ) or _variable(env, IMPERSONATE_VARIABLES)
    return Resolved(token, keys, impersonate)


def google_credentials(
    auth: GoogleAuth | None = None, *, loopback: bool = False
) -> Credentials | None:
    """The credentials of ``auth`` and the variables (``resolve``, then ``build``)."""
    return resolve(auth).build(loopback=loopback)


def loopback_channel(endpoint: str, credentials: Credentials | None) -> grpc.Channel:
    """A channel to a loopback ``endpoint`` (a fake): local (LOCAL_TCP), with each call
    carrying ``credentials``' bearer token when there are credentials."""
    import grpc
    from google.auth.transport.grpc import AuthMetadataPlugin
    from google.auth.transport.requests import Request

    local = grpc.local_channel_credentials(grpc.LocalConnectionType.LOCAL_TCP)
    if credentials is None:
        return grpc.secure_channel(endpoint, local)
    plugin = AuthMetadataPlugin(credentials, Request())  # type: ignore[no-untyped-call]
    calls = grpc.metadata_call_credentials(plugin)
    return grpc.secure_channel(endpoint, grpc.composite_channel_credentials(local, calls))


def is_metadata_failure(message: str) -> bool:
    """Whether a call failed because its credentials could not be had (``METADATA_FAILURE``)."""
    return METADATA_FAILURE in message


def _text(value: Any) -> str:
    if isinstance(value, Mapping):
        return json.dumps(value)
    return value.strip() if isinstance(value, str) else ""


def _shown(value: str) -> str:
    return HIDDEN if value else "''"


def _setting(value: str, key: str) -> Setting | None:
    return Setting(value, key) if value else None


def _variable(env: Mapping[str, str], names: tuple[str, ...]) -> Setting | None:
    """The first of the variables ``names`` that is set."""
    for name in names:
        if value := env.get(name, "").strip():
            return Setting(value, name)
    return None


def _how_to_set(source: str) -> str:
    return _HOW_TO_SET.get(source, f"set {source}")


def _path_or_contents(setting: Setting) -> str:
    """The setting's value, or the file it names (the Terraform provider's
    ``PathOrContents``: a value that names a file is read from it)."""
    value = setting.value
    if value.startswith("{"):
        return value
    path = Path(value).expanduser()
    try:
        if path.is_file():
            return path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise CredentialsError(
            f"{setting.source}: the file it names cannot be read ({exc.strerror}): "
            f"make it readable, or {_how_to_set(setting.source)}"
        ) from exc
    except ValueError:  # not a path at all (a NUL in it): the value itself
        pass
    return value


def _token_credentials(setting: Setting) -> Credentials:
    from google.oauth2 import credentials as oauth2

    token = _path_or_contents(setting)
    return oauth2.Credentials(token=token)  # type: ignore[no-untyped-call]


def _json_credentials(setting: Setting) -> Credentials:
    """Credentials from a key or configuration, by its type's own loader."""
    text = _path_or_contents(setting)
    kinds = ", ".join(f"{kind} ({what})" for kind, what in CREDENTIAL_TYPES.items())
    write = (
        f"write the path of, or the JSON of, a service account key or a Workload Identity "
        f"Federation configuration ({_how_to_set(setting.source)})"
    )
    try:
        info = json.loads(text)
    except ValueError:
        raise CredentialsError(
            f"{setting.source}: neither the path of a file nor credentials JSON: {write}"
        ) from None
    kind = info.get("type") if isinstance(info, Mapping) else None
    if kind not in CREDENTIAL_TYPES:
        raise CredentialsError(
            f"{setting.source}: credentials JSON of type {kind!r}, which is none of "
            f"{kinds}: {write}"
        )
    try:
        return _load(str(kind), info)
    except (ValueError, KeyError, TypeError) as exc:
        # google-auth's MalformedError is a ValueError; its messages name fields only.
        missing = str(exc) if isinstance(exc, ValueError) else f"no {exc}"
        raise CredentialsError(
            f"{setting.source}: {CREDENTIAL_TYPES[str(kind)]} that cannot be loaded "
            f"({missing}): give the whole file Google made, unchanged; {write}"
        ) from None


def _load(kind: str, info: Mapping[str, Any]) -> Credentials:
    """``info`` (of type ``kind``) by the loader of its type (google-auth's advice, against
    ``load_credentials_from_dict``, which loads whatever type a JSON names)."""
    loader: Any  # google-auth's loaders have no annotations
    if kind == "service_account":
        from google.oauth2 import service_account

        loader = service_account.Credentials.from_service_account_info
    elif kind == "authorized_user":
        from google.oauth2 import credentials as oauth2

        loader = oauth2.Credentials.from_authorized_user_info
    elif kind == "impersonated_service_account":
        from google.auth import impersonated_credentials

        loader = impersonated_credentials.Credentials.from_impersonated_service_account_info
    elif kind == "external_account_authorized_user":
        from google.auth import external_account_authorized_user

        loader = external_account_authorized_user.Credentials.from_info
    else:
        loader = _external_account_loader(info)
    loaded: Credentials = loader(info, scopes=list(SCOPES))
    return loaded


def _external_account_loader(info: Mapping[str, Any]) -> Any:
    """The loader of an external account (Workload Identity Federation) by its subject
    token's source, as ``google.auth._default`` tells them apart: AWS, an executable, else
    a file or a URL."""
    source = info.get("credential_source") or {}
    if str(info.get("subject_token_type", "")).endswith(":aws4_request"):
        from google.auth import aws

        return aws.Credentials.from_info
    if isinstance(source, Mapping) and source.get("executable") is not None:
        from google.auth import pluggable

        return pluggable.Credentials.from_info
    from google.auth import identity_pool

    return identity_pool.Credentials.from_info


def _default_credentials() -> Credentials:
    """Application Default Credentials, or ``CredentialsError`` saying how to give some."""
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    try:
        found, _project = google.auth.default(scopes=list(SCOPES))
    except DefaultCredentialsError as exc:
        raise CredentialsError(
            f"no Google credentials ({exc}): sign in with `gcloud auth application-default "
            f"login`, or set {ACCESS_TOKEN_KEY} (or GOOGLE_OAUTH_ACCESS_TOKEN: Pulumi ESC's "
            f"gcp-login sets it), or {CREDENTIALS_KEY} (or GOOGLE_APPLICATION_CREDENTIALS) to "
            "a service account key or a Workload Identity Federation configuration"
        ) from exc
    credentials: Credentials = found
    return credentials


def _impersonated(source: Credentials, target: Setting) -> Credentials:
    from google.auth import impersonated_credentials

    if "@" not in target.value:
        raise CredentialsError(
            f"{target.source}: {target.value!r} is not a service account's email: write "
            "one such as deployer@my-project.iam.gserviceaccount.com"
        )
    return impersonated_credentials.Credentials(  # type: ignore[no-untyped-call]
        source_credentials=source,
        target_principal=target.value,
        target_scopes=list(SCOPES),
        lifetime=IMPERSONATION_LIFETIME_S,
    )
