"""Google credentials as pulumi-gcp takes them (``vertex_training.credentials``): the order
of the sources, the JSON refused with its key and what to write, secrets kept out of
reprs and messages, and the token a call carries, as the fake JobService receives it,
through the dynamic resources and the plugin alike."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from google.auth import impersonated_credentials
from google.oauth2 import credentials as oauth2
from google.oauth2 import service_account
from pulumi.provider.experimental.provider import CheckRequest, ConfigureRequest, CreateRequest

from tests.clients import configured, registered
from vertex_training.backends.vertex import VertexBackend
from vertex_training.credentials import (
    GoogleAuth,
    Resolved,
    Setting,
    google_credentials,
    resolve,
)
from vertex_training.errors import CredentialsError
from vertex_training.keys import ACCESS_TOKEN_KEY, CREDENTIALS_KEY, IMPERSONATE_SERVICE_ACCOUNT_KEY
from vertex_training.plugin.provider import VertexTrainingProvider
from vertex_training.plugin.values import property_value
from vertex_training.resources.state import ProviderSettings
from vertex_training.resources.training_job import TrainingJobProvider
from vertex_training.testing.fake_vertex import FakeVertex

PROJECT, REGION = "test-project", "us-central1"
IMAGE = "us-docker.pkg.dev/test-project/train/trainer:1"
TOKEN = "ya29.config-token-never-shown"
ENV_TOKEN = "ya29.variable-token-never-shown"
ACCOUNT = "deployer@test-project.iam.gserviceaccount.com"
T = TypeVar("T")
#: An authorized user's application default login: loads with no network call.
USER_LOGIN = {
    "type": "authorized_user",
    "client_id": "id.apps.googleusercontent.com",
    "client_secret": "client-secret-never-shown",
    "refresh_token": "refresh-token-never-shown",
}


def body(name: str = "train") -> dict[str, Any]:
    """A minimal CustomJob REST body."""
    pool = {
        "machineSpec": {"machineType": "e2-standard-4"},
        "replicaCount": "1",
        "containerSpec": {"imageUri": IMAGE},
    }
    return {"displayName": name, "jobSpec": {"workerPoolSpecs": [pool]}}


def service_account_key() -> dict[str, str]:
    """A service account key as Google makes one (its private key made here)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    return {
        "type": "service_account",
        "project_id": PROJECT,
        "private_key_id": "0123",
        "private_key": pem,
        "client_email": ACCOUNT,
        "client_id": "1",
        "token_uri": "https://oauth2.googleapis.com/token",
    }


def run(call: Coroutine[Any, Any, T]) -> T:
    """The plugin's ``call`` run on a loop of its own (``asyncio.run`` would leave the
    thread without a current loop, which the Pulumi SDK's mocks of later tests need)."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(call)
    finally:
        loop.close()


@pytest.fixture
def fake() -> Iterator[FakeVertex]:
    with FakeVertex(queued_s=0.05, pending_s=0.05, run_s=0.3) as served:
        yield served


@pytest.fixture
def guarded() -> Iterator[FakeVertex]:
    """A fake that answers only calls carrying TOKEN, as Google answers a valid token."""
    with FakeVertex(queued_s=0.05, pending_s=0.05, run_s=0.3, token=TOKEN) as served:
        yield served


def sources(resolved: Resolved) -> list[str | None]:
    """Where each of the three settings was read (token, credentials, account)."""
    settings = (resolved.access_token, resolved.credentials, resolved.impersonate_service_account)
    return [None if setting is None else setting.source for setting in settings]


class TestPrecedence:
    """The sources in pulumi-gcp's order: config beats every variable, a token beats
    credentials, impersonation on top of either, Application Default Credentials last."""

    def test_nothing_set_is_application_default_credentials(self) -> None:
        """No config and no variable: nothing resolved, and ADC described."""
        resolved = resolve(GoogleAuth(), {})
        assert not resolved.configured
        assert resolved.describe() == "Application Default Credentials"

    def test_the_variable_is_used_when_no_config_is_given(self) -> None:
        """GOOGLE_OAUTH_ACCESS_TOKEN is the token when the config sets none."""
        resolved = resolve(GoogleAuth(), {"GOOGLE_OAUTH_ACCESS_TOKEN": ENV_TOKEN})
        assert resolved.access_token == Setting(ENV_TOKEN, "GOOGLE_OAUTH_ACCESS_TOKEN")

    def test_the_configured_token_beats_the_variable(self) -> None:
        """vertex-training:accessToken wins over GOOGLE_OAUTH_ACCESS_TOKEN."""
        resolved = resolve(GoogleAuth(TOKEN), {"GOOGLE_OAUTH_ACCESS_TOKEN": ENV_TOKEN})
        assert resolved.access_token == Setting(TOKEN, ACCESS_TOKEN_KEY)

    def test_configured_credentials_silence_every_token_variable(self) -> None:
        """Config beats the variables in all cases: configured credentials leave
        GOOGLE_OAUTH_ACCESS_TOKEN unread, as the Terraform provider's configure does."""
        env = {"GOOGLE_OAUTH_ACCESS_TOKEN": ENV_TOKEN, "GOOGLE_CREDENTIALS": "{}"}
        resolved = resolve(GoogleAuth(credentials=json.dumps(USER_LOGIN)), env)
        assert sources(resolved) == [None, CREDENTIALS_KEY, None]

    def test_the_credentials_variables_in_their_order(self) -> None:
        """GOOGLE_CREDENTIALS, then GOOGLE_CLOUD_KEYFILE_JSON, then GCLOUD_KEYFILE_JSON."""
        env = {"GCLOUD_KEYFILE_JSON": "c", "GOOGLE_CLOUD_KEYFILE_JSON": "b"}
        assert resolve(None, env).credentials == Setting("b", "GOOGLE_CLOUD_KEYFILE_JSON")
        env["GOOGLE_CREDENTIALS"] = "a"
        assert resolve(None, env).credentials == Setting("a", "GOOGLE_CREDENTIALS")

    def test_a_token_beats_credentials(self) -> None:
        """With both, the calls carry the token (the credentials are not loaded)."""
        both = GoogleAuth(access_token=TOKEN, credentials="not even JSON")
        made = google_credentials(both)
        assert isinstance(made, oauth2.Credentials) and made.token == TOKEN
        variables = {"GOOGLE_OAUTH_ACCESS_TOKEN": ENV_TOKEN, "GOOGLE_CREDENTIALS": "{}"}
        assert resolve(None, variables).describe() == (
            "the access token of GOOGLE_OAUTH_ACCESS_TOKEN"
        )

    def test_impersonation_goes_on_top_of_the_token(self) -> None:
        """impersonateServiceAccount makes the calls as that account, from the token;
        its variable serves when the config sets none."""
        made = google_credentials(GoogleAuth(TOKEN, impersonate_service_account=ACCOUNT))
        assert isinstance(made, impersonated_credentials.Credentials)
        assert made.service_account_email == ACCOUNT
        env = {"GOOGLE_IMPERSONATE_SERVICE_ACCOUNT": ACCOUNT}
        resolved = resolve(GoogleAuth(TOKEN), env)
        assert sources(resolved) == [ACCESS_TOKEN_KEY, None, "GOOGLE_IMPERSONATE_SERVICE_ACCOUNT"]
        assert resolved.describe() == (
            f"the access token of {ACCESS_TOKEN_KEY}, impersonating {ACCOUNT} "
            "(GOOGLE_IMPERSONATE_SERVICE_ACCOUNT)"
        )

    def test_the_configured_account_beats_its_variable(self) -> None:
        """vertex-training:impersonateServiceAccount wins over the variable."""
        env = {"GOOGLE_IMPERSONATE_SERVICE_ACCOUNT": "other@x.iam.gserviceaccount.com"}
        resolved = resolve(GoogleAuth(impersonate_service_account=ACCOUNT), env)
        assert resolved.impersonate_service_account == Setting(
            ACCOUNT, IMPERSONATE_SERVICE_ACCOUNT_KEY
        )

    def test_application_default_credentials_come_last(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With nothing set, GOOGLE_APPLICATION_CREDENTIALS' file is what is used."""
        adc = tmp_path / "adc.json"
        adc.write_text(json.dumps(USER_LOGIN))
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
        made = google_credentials()
        assert isinstance(made, oauth2.Credentials)
        assert made.refresh_token == USER_LOGIN["refresh_token"]

    def test_a_loopback_endpoint_given_nothing_gets_no_credentials(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A fake is not sent Application Default Credentials (none are looked for)."""
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "none.json"))
        assert google_credentials(loopback=True) is None

    def test_no_credentials_anywhere_says_what_to_set(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """No source at all: CredentialsError naming the keys, the variables and gcloud."""
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "none.json"))
        with pytest.raises(CredentialsError) as raised:
            google_credentials()
        message = str(raised.value)
        assert message.startswith("no Google credentials")
        for named in (ACCESS_TOKEN_KEY, CREDENTIALS_KEY, "GOOGLE_OAUTH_ACCESS_TOKEN", "gcloud"):
            assert named in message


class TestCredentialsJson:
    """``credentials``: a path or the JSON of a key or configuration, loaded by its type's
    own loader; anything else refused naming the key and what to write, never the value."""

    def test_a_service_account_key_as_json(self) -> None:
        """A key given as its JSON loads as that service account."""
        made = google_credentials(GoogleAuth(credentials=json.dumps(service_account_key())))
        assert isinstance(made, service_account.Credentials)
        assert made.service_account_email == ACCOUNT

    def test_a_path_is_read(self, tmp_path: Path) -> None:
        """A value that names a file is read from it (the Terraform provider's
        PathOrContents)."""
        path = tmp_path / "login.json"
        path.write_text(json.dumps(USER_LOGIN))
        made = google_credentials(GoogleAuth(credentials=str(path)))
        assert isinstance(made, oauth2.Credentials)
        assert made.client_id == USER_LOGIN["client_id"]

    def test_a_workload_identity_federation_configuration(self, tmp_path: Path) -> None:
        """An external account (what google-github-actions/auth writes) loads without a
        call to Google."""
        from google.auth import identity_pool

        config = {
            "type": "external_account",
            "audience": "//iam.googleapis.com/projects/1/locations/global/"
            "workloadIdentityPools/github/providers/vertex-training",
            "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            "token_url": "https://sts.googleapis.com/v1/token",
            "credential_source": {"file": str(tmp_path / "oidc-token")},
        }
        made = google_credentials(GoogleAuth(credentials=json.dumps(config)))
        assert isinstance(made, identity_pool.Credentials)

    @pytest.mark.parametrize(
        ("value", "said"),
        [
            ("{not json", "neither the path of a file nor credentials JSON"),
            ("/no/such/key.json", "neither the path of a file nor credentials JSON"),
            ('{"type": "api_key", "key": "secret-value"}', "of type 'api_key'"),
            ('{"type": "service_account", "private_key": "secret-value"}', "missing fields"),
        ],
    )
    def test_bad_credentials_are_refused_naming_the_key(self, value: str, said: str) -> None:
        """CredentialsError: the key, what is wrong, and what to write; not the value."""
        with pytest.raises(CredentialsError) as raised:
            google_credentials(GoogleAuth(credentials=value))
        message = str(raised.value)
        assert message.startswith(f"{CREDENTIALS_KEY}: ")
        assert said in message
        assert "a service account key or a Workload Identity Federation configuration" in message
        assert f"pulumi config set --secret {CREDENTIALS_KEY}" in message
        assert "secret-value" not in message and "{not json" not in message

    def test_a_bad_variable_is_named(self) -> None:
        """Credentials read from a variable are refused naming the variable."""
        with pytest.raises(CredentialsError, match=r"^GOOGLE_CREDENTIALS: .*set GOOGLE_CRED"):
            resolve(None, {"GOOGLE_CREDENTIALS": "{}"}).build()

    def test_an_account_that_is_no_email_is_refused(self) -> None:
        """impersonateServiceAccount must be a service account's email."""
        with pytest.raises(CredentialsError, match=IMPERSONATE_SERVICE_ACCOUNT_KEY):
            google_credentials(GoogleAuth(TOKEN, impersonate_service_account="deployer"))


class TestSecretsHidden:
    """The token and the JSON never show in a repr."""

    def test_the_token_is_not_in_the_repr_of_the_settings(self) -> None:
        """ProviderSettings, its GoogleAuth and the resolved settings hide both secrets."""
        auth = GoogleAuth(TOKEN, json.dumps(USER_LOGIN), ACCOUNT)
        settings = ProviderSettings(api_endpoint="127.0.0.1:9", auth=auth)
        for shown in (repr(settings), str(settings), repr(auth), repr(resolve(auth, {}))):
            assert TOKEN not in shown
            assert USER_LOGIN["refresh_token"] not in shown
        assert "access_token=[secret]" in repr(settings) and ACCOUNT in repr(settings)

    def test_the_settings_are_read_from_the_stack_config(self) -> None:
        """configure reads the three keys of the dynamic resources' stack config."""
        provider = configured(
            TrainingJobProvider(),
            "127.0.0.1:9",
            config={ACCESS_TOKEN_KEY: TOKEN, IMPERSONATE_SERVICE_ACCOUNT_KEY: ACCOUNT},
        )
        assert provider.settings.auth == GoogleAuth(TOKEN, "", ACCOUNT)


class TestTheTokenReachesTheService:
    """The bearer token the fake receives proves which credential a call used."""

    def test_a_job_submitted_with_the_configured_token_carries_it(
        self, guarded: FakeVertex
    ) -> None:
        """A dynamic TrainingJob configured with vertex-training:accessToken submits its
        job with that token, at every call."""
        provider = configured(TrainingJobProvider(), guarded, config={ACCESS_TOKEN_KEY: TOKEN})
        checked = provider.check({}, registered(guarded, "train", {"image": IMAGE}))
        assert not checked.failures, [f.reason for f in checked.failures]
        created = provider.create(checked.inputs)
        assert created.id in guarded.jobs
        assert {bearer.token for bearer in guarded.bearers} == {TOKEN}
        assert "CreateCustomJob" in {bearer.method for bearer in guarded.bearers}

    def test_the_plugin_submits_with_its_configured_token(
        self, guarded: FakeVertex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The plugin's provider config accessToken reaches the fake, and check_config
        records it as a secret."""
        monkeypatch.chdir(tmp_path)
        plugin = VertexTrainingProvider("0.0.1")
        config = {
            "apiEndpoint": guarded.address,
            "project": PROJECT,
            "region": REGION,
            "accessToken": TOKEN,
        }
        args = {key: property_value(value) for key, value in config.items()}
        checked_config = run(plugin.check_config(CheckRequest("urn", {}, args, b"")))
        assert checked_config.inputs["accessToken"].is_secret
        assert not checked_config.inputs["apiEndpoint"].is_secret
        run(plugin.configure(ConfigureRequest({}, args, True, True)))
        urn = "urn:pulumi:dev::training::vertex-training:index:TrainingJob::train"
        job = {"job": property_value({"image": IMAGE, "machine": "e2-standard-4"})}
        checked = run(plugin.check(CheckRequest(urn, {}, job, b"")))
        created = run(plugin.create(CreateRequest(urn, checked.inputs, 60.0, False)))
        assert created.resource_id in guarded.jobs
        assert {bearer.token for bearer in guarded.bearers} == {TOKEN}

    def test_the_variable_is_used_when_no_config_is_given(
        self, fake: FakeVertex, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With no accessToken configured, GOOGLE_OAUTH_ACCESS_TOKEN is the calls' token."""
        monkeypatch.setenv("GOOGLE_OAUTH_ACCESS_TOKEN", ENV_TOKEN)
        VertexBackend(PROJECT, REGION, api_endpoint=fake.address).submit(body())
        assert [(b.method, b.token) for b in fake.bearers] == [("CreateCustomJob", ENV_TOKEN)]

    def test_the_configured_token_beats_the_variable_at_the_service(
        self, guarded: FakeVertex, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Given both, the call carries the configured token, not the variable's."""
        monkeypatch.setenv("GOOGLE_OAUTH_ACCESS_TOKEN", ENV_TOKEN)
        backend = VertexBackend(
            PROJECT, REGION, api_endpoint=guarded.address, auth=GoogleAuth(TOKEN)
        )
        backend.submit(body())
        assert [b.token for b in guarded.bearers] == [TOKEN]

    def test_with_nothing_configured_no_token_is_sent(self, fake: FakeVertex) -> None:
        """The default path: a fake gets no authorization at all."""
        VertexBackend(PROJECT, REGION, api_endpoint=fake.address).submit(body())
        assert [b.token for b in fake.bearers] == [""]

    def test_a_refused_token_is_a_credentials_error_not_retried(
        self, guarded: FakeVertex, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """UNAUTHENTICATED: one call, and a message naming the token's source and the fix,
        never the token."""
        monkeypatch.setenv("GOOGLE_OAUTH_ACCESS_TOKEN", ENV_TOKEN)
        backend = VertexBackend(PROJECT, REGION, api_endpoint=guarded.address)
        with pytest.raises(CredentialsError) as raised:
            backend.submit(body())
        message = str(raised.value)
        assert "the access token of GOOGLE_OAUTH_ACCESS_TOKEN" in message
        assert "UNAUTHENTICATED" in message and "give a fresh one" in message
        assert ENV_TOKEN not in message
        assert len(guarded.bearers) == 1 and guarded.jobs == {}

    def test_a_call_without_credentials_is_told_none_were_set(self, guarded: FakeVertex) -> None:
        """A service that wants a token, and none configured: the message says so and
        names the settings to set."""
        backend = VertexBackend(PROJECT, REGION, api_endpoint=guarded.address)
        with pytest.raises(CredentialsError) as raised:
            backend.get(f"projects/{PROJECT}/locations/{REGION}/customJobs/1")
        assert "refused no credentials (none are set" in str(raised.value)
        assert ACCESS_TOKEN_KEY in str(raised.value)
        assert [b.token for b in guarded.bearers] == [""]

    def test_a_token_that_cannot_be_had_is_not_retried(self, fake: FakeVertex) -> None:
        """Credentials whose refresh fails send nothing: CredentialsError at once."""
        user = GoogleAuth(credentials=json.dumps({**USER_LOGIN, "token_uri": "http://127.0.0.1:9"}))
        backend = VertexBackend(PROJECT, REGION, api_endpoint=fake.address, auth=user)
        with pytest.raises(
            CredentialsError, match="the credentials of vertex-training:credentials"
        ):
            backend.get(f"projects/{PROJECT}/locations/{REGION}/customJobs/1")
        assert fake.bearers == []

    def test_the_logs_are_read_with_the_same_token(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Cloud Logging (a failed job's last lines) is called with the job's token."""
        with FakeVertex(serve_logging=True, token=TOKEN) as served:
            backend = VertexBackend(
                PROJECT, REGION, api_endpoint=served.address, auth=GoogleAuth(TOKEN)
            )
            job = backend.submit(body())
            backend.log_tail(job.name, "workerpool0-0", 5)
            assert {b.method for b in served.bearers} == {"CreateCustomJob", "ListLogEntries"}
            assert {b.token for b in served.bearers} == {TOKEN}
