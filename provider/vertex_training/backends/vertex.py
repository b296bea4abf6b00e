"""The ``vertex`` backend: custom jobs and hyperparameter tuning jobs on Vertex AI,
through ``JobServiceClient``; training pipelines and the models they register, through
``PipelineServiceClient`` and ``ModelServiceClient``, are ``vertex_pipelines``'s half.

Both kinds go through the same methods: ``submit`` calls CreateHyperparameterTuningJob
for a body with a ``studySpec`` and CreateCustomJob otherwise; ``get``, ``cancel`` and
``delete`` pick the RPC from the resource name (``.../hyperparameterTuningJobs/ID`` or
``.../customJobs/ID``, told apart with the client's path helpers); ``find_by_label``
lists both kinds. Everything below about CreateCustomJob holds for
CreateHyperparameterTuningJob too: same retries, same error mapping.

Google client libraries are imported inside the operations, never at module import:
the dynamic provider imports this module for every preview, and a no-change preview must
not pay for ``google.cloud.aiplatform_v1`` (about 2 s). The client is made on first
use.

Errors. Every call but CreateCustomJob (see below) retries UNAVAILABLE,
DEADLINE_EXCEEDED, INTERNAL and UNKNOWN with exponential backoff (``RetryPolicy``): they
are reads, or cancels and deletes that can be made twice; the label lookup
(``find_by_label``: ListCustomJobs, ListHyperparameterTuningJobs) is one of them.
``_invoke`` is the one place that makes calls and turns ``google.api_core`` exceptions
into ``vertex_training.errors``: retries exhausted, or a transient error not retried, ->
``TransientError``; anything else (INVALID_ARGUMENT, PERMISSION_DENIED, NOT_FOUND,
FAILED_PRECONDITION, ...) -> ``PermanentError`` with the API's message. A call refused
for its credentials (UNAUTHENTICATED), or made without them because they could not be
had (gRPC's "Getting metadata from plugin failed", an UNAVAILABLE that sent nothing), is
never retried -> ``CredentialsError``, naming the credential used
(``vertex_training.credentials``) and the fix.

Request quotas. RESOURCE_EXHAUSTED is a quota refusal: nothing was done. Every call, the
creates included, waits for its turn from the process's pacer of its quota
(``vertex_training.backends.pacing``: job submissions for the creates, resource management for
the rest), and a refused call tells the pacer, which slows every thread of the process
down together, and waits its turn again. Waiting never counts against the retry
deadline: a refused call is made again for as long as the pacer's calls keep being
admitted, and fails (``TransientError``) only when its quota has admitted none of them
for the retry deadline (``RETRY_DEADLINE_S``). The polls of a delete's long-running
operation are not paced: they retry RESOURCE_EXHAUSTED with backoff, as before.

CreateCustomJob is not idempotent: Vertex has no request ID or caller-chosen job ID for
it. google/rpc/code.proto says DEADLINE_EXCEEDED "may be returned even if the operation
has completed successfully", gives INTERNAL ("some invariants expected by the underlying
system have been broken") and UNKNOWN ("errors raised by APIs that do not return enough
error information") no promise either way, and warns of UNAVAILABLE that "it is not
always safe to retry non-idempotent operations" (a connection lost after the request was
sent): after any of the four (``UNCERTAIN_CODES``) the job may or may not exist. So
``submit`` makes again only a call refused for quota (RESOURCE_EXHAUSTED: nothing was
done; paced as above), and raises ``UncertainError`` (naming the code) at once for the
other four. The caller (``vertex_training.resources.training_job``) retries those itself,
bounded, looking the job's identity label up before every attempt, so that a job an
earlier attempt created is adopted and never submitted twice.
"""

from __future__ import annotations

import dataclasses
import threading
import warnings
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, overload
from urllib.parse import quote

from vertex_training.api.bodies import is_tuning_body
from vertex_training.api.pipelines import is_pipeline_body
from vertex_training.api.scheduling import PoolShape, shape_of_spec
from vertex_training.backends import reachability
from vertex_training.backends.base import JobStatus, RegisteredModel
from vertex_training.backends.cloud_logs import is_loopback as _is_loopback
from vertex_training.backends.pacing import (
    CRUD,
    DEFAULT_PACING,
    QUOTAS_PAGE,
    SUBMIT,
    PacerKey,
    PacingPolicy,
    pacer_for,
)
from vertex_training.backends.vertex_pipelines import PipelineCalls, primary_metric, trials_of
from vertex_training.credentials import GoogleAuth, Resolved, is_metadata_failure, resolve
from vertex_training.credentials import loopback_channel as _loopback_channel
from vertex_training.errors import CredentialsError, PermanentError, TransientError, UncertainError
from vertex_training.keys import API_ENDPOINT_KEY

# The Google libraries warn at import about support dates of Python and grpcio that are
# the pinned toolchain's business, not the user's; in a Pulumi run those warnings land in
# the stack's diagnostics of every update.
warnings.filterwarnings("ignore", category=FutureWarning, module=r"google\.(api_core|auth)\.")

if TYPE_CHECKING:
    from google.api_core.exceptions import GoogleAPICallError
    from google.api_core.retry import Retry
    from google.auth.credentials import Credentials
    from google.cloud.aiplatform_v1 import (
        JobServiceClient,
        ModelServiceClient,
        PipelineServiceClient,
    )
    from google.cloud.aiplatform_v1.types import CustomJob, HyperparameterTuningJob
    from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client
    from google.protobuf.message import Message

#: Regional endpoint of the Vertex AI API.
ENDPOINT_TEMPLATE = "{region}-aiplatform.googleapis.com"

#: Backoff between retries of a transient error: first wait, longest wait, growth factor.
RETRY_INITIAL_S = 1.0
RETRY_MAX_S = 30.0
RETRY_MULTIPLIER = 2.0
#: Give up retrying one call after this long; and give up a call refused for quota when
#: the quota has admitted none of the process's calls for this long (``_invoke``).
RETRY_DEADLINE_S = 300.0
#: The longest wait between retries of a call to an endpoint not reached yet
#: (``reachability``): with the jitter, an unreachable one is told within about 20 s.
FIRST_CONTACT_MAX_S = 4.0
#: Deadline of a single RPC attempt.
RPC_TIMEOUT_S = 60.0
#: Polling of the DeleteCustomJob long-running operation, and how long to wait for it.
POLL_INITIAL_S = 1.0
POLL_MAX_S = 10.0
POLL_MULTIPLIER = 1.5
DELETE_TIMEOUT_S = 600.0

#: Errors that may pass if the same call is made again.
TRANSIENT_CODES = frozenset(
    {"UNAVAILABLE", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED", "INTERNAL", "UNKNOWN"}
)
#: The transient errors after which a create may or may not have created the job
#: (google/rpc/code.proto): ``submit`` raises them as ``UncertainError``.
UNCERTAIN_CODES = frozenset({"DEADLINE_EXCEEDED", "INTERNAL", "UNKNOWN", "UNAVAILABLE"})
#: A quota refusal (google/rpc/code.proto: "Some resource has been exhausted, perhaps a
#: per-user quota"): nothing was done. Every call, CreateCustomJob included, is made again
#: after it, paced (``vertex_training.backends.pacing``), never with the backoff of the others.
QUOTA_CODE = "RESOURCE_EXHAUSTED"
#: The transient errors after which CreateCustomJob certainly did not create a job, other
#: than quota: none. (A create refused for quota is made again by the pacing loop.)
CREATE_RETRY_CODES: frozenset[str] = frozenset()

_STATE_PREFIX = "JOB_STATE_"
_CONSOLE_URL = (
    "https://console.cloud.google.com/vertex-ai/locations/{location}"
    "/training/{job_id}/cpu?project={project}"
)
_TUNING_CONSOLE_URL = (
    "https://console.cloud.google.com/vertex-ai/locations/{location}"
    "/training/{job_id}?project={project}"
)
#: Custom job logs are under resource.type "ml_job", labelled with the numeric job ID.
_LOGS_URL = "https://console.cloud.google.com/logs/query;query={query}?project={project}"
_LOGS_QUERY = 'resource.type="ml_job"\nresource.labels.job_id="{job_id}"'

_T = TypeVar("_T")


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff, in seconds: wait ``initial_s``, growing by ``multiplier`` up
    to ``max_s`` between attempts, for at most ``deadline_s`` in all.
    """

    initial_s: float = RETRY_INITIAL_S
    max_s: float = RETRY_MAX_S
    multiplier: float = RETRY_MULTIPLIER
    deadline_s: float = RETRY_DEADLINE_S

    def build(self, predicate: Callable[[Exception], bool]) -> Retry:
        """A ``google.api_core`` Retry of the exceptions ``predicate`` accepts."""
        from google.api_core.retry import Retry

        return Retry(
            predicate=predicate,
            initial=self.initial_s,
            maximum=self.max_s,
            multiplier=self.multiplier,
            timeout=self.deadline_s,
        )


#: How every call retries transient errors.
DEFAULT_RETRY = RetryPolicy()
#: How ``delete`` polls its long-running operation.
DELETE_POLLING = RetryPolicy(
    initial_s=POLL_INITIAL_S,
    max_s=POLL_MAX_S,
    multiplier=POLL_MULTIPLIER,
    deadline_s=DELETE_TIMEOUT_S,
)


#: The service clients of this process, by service, endpoint and credential settings
#: (``vertex_training.credentials.resolve``): every backend of an update (one per job and
#: operation) shares its endpoint's client, its channel and its connection, instead of
#: making them again for each job (about 2 ms of CPU each, a quarter of a submission's
#: cost in the provider). A client and its channel are safe to share between threads; a
#: channel reconnects by itself.
_SHARED_CLIENTS: dict[tuple[str, str, Resolved], Any] = {}
_SHARED_CLIENTS_LOCK = threading.Lock()


class VertexBackend:
    """Submit, look up, cancel and delete Vertex AI custom jobs in one project and region.

    ``client`` injects a ``JobServiceClient`` (how tests reach the fake service without
    patching); otherwise one is made on first use against ``api_endpoint``, by default
    ``{region}-aiplatform.googleapis.com``, with ``credentials``, else those of ``auth``
    (the provider's settings) and the variables pulumi-gcp reads, else Application
    Default Credentials (``vertex_training.credentials``). A loopback ``api_endpoint``
    (127.x, ::1, localhost) gets a local channel, with no credentials unless some are
    configured: that is how a stack reaches
    ``python -m vertex_training.testing.fake_vertex``. ``logging_client`` and
    ``logging_endpoint`` do the same for Cloud Logging (``log_tail``), ``pipeline_client``
    and ``model_client`` for training pipelines and models. ``retry`` is the
    backoff of transient errors, ``polling`` that of a delete's operation, ``pacing``
    how calls refused for quota slow down (shared with every backend of the process
    that has the same endpoint, project, region and pacing).
    """

    def __init__(
        self,
        project: str,
        region: str,
        *,
        client: JobServiceClient | None = None,
        api_endpoint: str | None = None,
        credentials: Credentials | None = None,
        auth: GoogleAuth | None = None,
        retry: RetryPolicy = DEFAULT_RETRY,
        polling: RetryPolicy = DELETE_POLLING,
        pacing: PacingPolicy = DEFAULT_PACING,
        logging_client: LoggingServiceV2Client | None = None,
        logging_endpoint: str | None = None,
        pipeline_client: PipelineServiceClient | None = None,
        model_client: ModelServiceClient | None = None,
    ) -> None:
        self.project = project
        self.region = region
        self.api_endpoint = api_endpoint
        #: Where Cloud Logging is reached: ``logging_endpoint``, else a loopback
        #: ``api_endpoint`` (the fake serves both), else Google's.
        self.logging_endpoint = logging_endpoint or (
            api_endpoint if api_endpoint and _is_loopback(api_endpoint) else None
        )
        self._logging_client = logging_client
        self.retry = retry
        self.polling = polling
        self.pacing = pacing
        self._client = client
        self._credentials = credentials
        self.auth = auth
        self._resolved: Resolved | None = None
        self._pipeline_clients = (pipeline_client, model_client)
        self._pipeline_calls: PipelineCalls | None = None

    # -- Backend -------------------------------------------------------------------------

    def submit(self, body: dict[str, Any]) -> JobStatus:
        """Create a CustomJob, or a HyperparameterTuningJob for a body with a
        ``studySpec``, from its REST JSON body; return it as created (QUEUED).

        One call, retried only for errors that say it was not served; after an error
        that leaves unknown whether the job was created (``UNCERTAIN_CODES``) it raises
        ``UncertainError``: look the job up before submitting it again. A TrainingPipeline
        body (``trainingTaskDefinition``) is CreateTrainingPipeline's (``vertex_pipelines``).
        """
        if is_pipeline_body(body):
            return self._pipelines().submit(body)
        client = self._job_client()
        parent = client.common_location_path(self.project, self.region)
        if is_tuning_body(body):
            method: Callable[..., Any] = client.create_hyperparameter_tuning_job
            job: dict[str, Any] = {"hyperparameter_tuning_job": _tuning_job_from_json(body)}
        else:
            method, job = client.create_custom_job, {"custom_job": _custom_job_from_json(body)}
        return _job_status(
            self.create(
                lambda retry: method(parent=parent, retry=retry, timeout=RPC_TIMEOUT_S, **job)
            )
        )

    def create(self, call: Callable[[Retry], _T]) -> _T:
        """Make a Create ``call``: paced as a submission, made again only when refused for
        quota, ``UncertainError`` after an error that leaves unknown whether it created."""
        return self._invoke(
            call, quota=SUBMIT, retry_codes=CREATE_RETRY_CODES, uncertain=UNCERTAIN_CODES
        )

    def get(self, name: str) -> JobStatus | None:
        """Return the job (a tuning job with its trials), or None when it does not exist
        (NOT_FOUND)."""
        if _collection(name) == _PIPELINES:
            return self._pipelines().get(name)
        job = self._fetch(name)
        return None if job is None else _job_status(job)

    def _fetch(self, name: str) -> Any:
        """The job's (or pipeline's) message, or None when it does not exist."""
        if _collection(name) == _PIPELINES:
            return self._pipelines().fetch(name)
        client = self._job_client()
        method = (
            client.get_hyperparameter_tuning_job if _is_tuning_name(name) else client.get_custom_job
        )
        return self._invoke(
            lambda retry: method(name=name, retry=retry, timeout=RPC_TIMEOUT_S),
            tolerate={"NOT_FOUND"},
        )

    def get_body(self, name: str) -> dict[str, Any] | None:
        """The job as the server holds it, as its REST body (camelCase JSON, int64 fields
        as text), output-only fields included; None when it does not exist. ``pulumi
        import`` reads a job's keys from it (``vertex_training.api.job_config``)."""
        from google.protobuf import json_format

        job = self._fetch(name)
        if job is None:
            return None
        body: dict[str, Any] = json_format.MessageToDict(type(job).pb(job))
        return body

    def find_by_label(self, key: str, value: str) -> list[JobStatus]:
        """Return the custom and tuning jobs and the pipelines whose label ``key`` equals
        ``value``, newest first. (ListHyperparameterTuningJobs leaves out trials: ``get``
        has them.)"""
        return self.list_jobs(label_filter({key: value}))

    def list_jobs(self, filter_: str) -> list[JobStatus]:
        """Return the custom and tuning jobs and the training pipelines (not their backing
        jobs) of the project and region that ``filter_`` (ListCustomJobsRequest.filter,
        AIP-160: ``label_filter`` writes one) selects, newest first, every page."""
        client = self._job_client()
        request = {
            "parent": client.common_location_path(self.project, self.region),
            "filter": filter_,
        }
        jobs: list[Any] = []
        for method in (client.list_custom_jobs, client.list_hyperparameter_tuning_jobs):
            jobs += self._invoke(
                lambda retry, method=method: list(  # type: ignore[misc]
                    method(request=request, retry=retry, timeout=RPC_TIMEOUT_S)
                ),
            )
        # The API does not promise an order.
        jobs.sort(key=_created_ns, reverse=True)
        return self._pipelines().listed(filter_, [_job_status(job) for job in jobs])

    def cancel(self, name: str) -> None:
        """Ask Vertex to cancel the job; not found or already ended is not an error.

        Cancellation is asynchronous: the job goes CANCELLING, then CANCELLED.
        """
        if _collection(name) == _PIPELINES:
            return self._pipelines().cancel(name)
        client = self._job_client()
        method = (
            client.cancel_hyperparameter_tuning_job
            if _is_tuning_name(name)
            else client.cancel_custom_job
        )
        self._invoke(
            lambda retry: method(name=name, retry=retry, timeout=RPC_TIMEOUT_S),
            tolerate={"NOT_FOUND", "FAILED_PRECONDITION"},
        )

    def delete(self, name: str) -> None:
        """Delete the job and wait for the long-running operation; not found is done.

        Vertex refuses (FAILED_PRECONDITION -> PermanentError) to delete a job that has
        not ended: cancel it and wait for a terminal state first. A pipeline's backing job
        goes with it; its model never does.
        """
        if _collection(name) == _PIPELINES:
            return self._pipelines().delete(name)
        client = self._job_client()
        tuning = _is_tuning_name(name)
        self.await_delete(
            client.delete_hyperparameter_tuning_job if tuning else client.delete_custom_job, name
        )

    def await_delete(self, method: Callable[..., Any], name: str) -> None:
        """Call the Delete ``method`` on ``name`` and wait for its long-running operation;
        not found is done."""

        def delete(retry: Retry) -> None:
            from google.api_core.future.polling import POLLING_PREDICATE

            operation = method(name=name, retry=retry, timeout=RPC_TIMEOUT_S)
            # This retry covers each GetOperation poll, quota refusals included (a refused
            # poll is no reason to delete again); ``polling`` spaces the polls out.
            operation.result(
                timeout=self.polling.deadline_s,
                retry=self.retry.build(lambda exc: _code_name(exc) in TRANSIENT_CODES),
                polling=self.polling.build(POLLING_PREDICATE),
            )

        self._invoke(delete, tolerate={"NOT_FOUND"})

    def find_model(self, model_id: str, owner_labels: Mapping[str, str]) -> str | None:
        """The model a pipeline registers its next version of (``vertex_pipelines``)."""
        owners = label_filter(dict(owner_labels)) if owner_labels else ""
        return self._pipelines().find_model(model_id, owners)

    def model_versions(self, model: str) -> list[RegisteredModel]:
        """Every version of the model ``model``, oldest first; [] when it does not exist."""
        return self._pipelines().model_versions(model)

    def output_directory(self, name: str) -> str:
        """A pipeline's task's base output directory; Vertex AI gives a job with no base
        output directory none (no AIP_MODEL_DIR)."""
        return self._pipelines().output_directory(name) if _collection(name) == _PIPELINES else ""

    def console_url(self, name: str) -> str:
        """The job's page in the Google Cloud console."""
        return console_url_of(name)

    def logs_url(self, name: str) -> str:
        """Cloud Logging, filtered on the job's logs (a pipeline's: its backing job's)."""
        if _collection(name) == _PIPELINES:
            backing = self._pipelines().backing_job_of(name)
            return logs_url_of(backing) if backing else console_url_of(name)
        return logs_url_of(name)

    def log_tail(self, name: str, replica: str, lines: int, end_time: str = "") -> list[str]:
        """The replica's last ``lines`` log lines, from Cloud Logging (``cloud_logs``); a
        pipeline's are its backing job's ([] before it has one)."""
        from vertex_training.backends.cloud_logs import CloudLogs

        if _collection(name) == _PIPELINES and not (name := self._pipelines().backing_job_of(name)):
            return []
        parts = _parse_job_name(name)
        logs = CloudLogs(
            parts["project"],
            client=self._logging_client,
            api_endpoint=self.logging_endpoint,
            credentials=self._credentials,
            auth=self.auth,
        )
        return logs.tail(parts["job_id"], replica, lines, end_time)

    # -- internals -----------------------------------------------------------------------

    def _job_client(self) -> JobServiceClient:
        """The JobServiceClient: the injected one, else ``service_client``'s."""
        if self._client is None:
            self._client = self.service_client("job")
        return self._client

    def _pipelines(self) -> PipelineCalls:
        """The pipeline and model half of the backend (``vertex_pipelines``)."""
        if self._pipeline_calls is None:
            self._pipeline_calls = PipelineCalls(self, RPC_TIMEOUT_S, *self._pipeline_clients)
        return self._pipeline_calls

    def service_client(self, service: str) -> Any:
        """The client of ``service`` ("job", "pipeline", "model"), made on first use: the
        process's client of this service, endpoint and credential settings
        (``_SHARED_CLIENTS``), or one of its own for a backend given credentials. Two
        threads racing for a backend's own may each make one; the spare is dropped.
        ``CredentialsError`` when the credentials cannot be had."""
        if self._credentials is not None:
            return self._make_client(service, self._credentials)
        self._resolved = resolve(self.auth)
        key = (service, self._endpoint(), self._resolved)
        with _SHARED_CLIENTS_LOCK:
            if key not in _SHARED_CLIENTS:
                made = self._resolved.build(loopback=_is_loopback(key[1]))
                _SHARED_CLIENTS[key] = self._make_client(service, made)
            return _SHARED_CLIENTS[key]

    def _make_client(self, service: str, credentials: Credentials | None) -> Any:
        import importlib

        # aiplatform_v1.services.job_service.JobServiceClient, JobServiceGrpcTransport...
        package = importlib.import_module(f"google.cloud.aiplatform_v1.services.{service}_service")
        stem = f"{service.capitalize()}Service"
        endpoint = self._endpoint()
        if _is_loopback(endpoint):
            transports = importlib.import_module(f"{package.__name__}.transports.grpc")
            # With a ready channel the transport never looks for credentials itself.
            channel = _loopback_channel(endpoint, credentials)
            transport = getattr(transports, f"{stem}GrpcTransport")(channel=channel)
            return getattr(package, f"{stem}Client")(transport=transport)
        options = {"api_endpoint": endpoint}
        return getattr(package, f"{stem}Client")(credentials=credentials, client_options=options)

    def _pacer_key(self, quota: str) -> PacerKey:
        return PacerKey(self._endpoint(), self.project, self.region, quota)

    @overload
    def _invoke(
        self,
        call: Callable[[Retry], _T],
        *,
        quota: str = ...,
        retry_codes: Collection[str] = ...,
        uncertain: Collection[str] = ...,
    ) -> _T: ...

    @overload
    def _invoke(
        self,
        call: Callable[[Retry], _T],
        *,
        quota: str = ...,
        retry_codes: Collection[str] = ...,
        uncertain: Collection[str] = ...,
        tolerate: Collection[str],
    ) -> _T | None: ...

    def _invoke(
        self,
        call: Callable[[Retry], _T],
        *,
        quota: str = CRUD,
        retry_codes: Collection[str] = TRANSIENT_CODES,
        uncertain: Collection[str] = (),
        tolerate: Collection[str] = (),
    ) -> _T | None:
        """Run ``call(retry)`` in its turn from the pacer of request quota ``quota``
        (``SUBMIT`` or ``CRUD``), retrying with backoff the errors whose code is in
        ``retry_codes``; return None if it fails with a code in ``tolerate``; raise
        ``UncertainError`` if it fails with a code in ``uncertain``. A call refused for
        quota is made again in its next turn, until the quota has admitted none of the
        pacer's calls for ``retry.deadline_s``. The one place where Google API errors
        become provider errors.
        """
        from google.api_core import exceptions

        endpoint = self._endpoint()
        if (told := reachability.known_unreachable(endpoint)) is not None:
            raise TransientError(told)

        def retryable(exc: Exception) -> bool:
            if _is_connect_failure(exc) and reachability.never_reached(endpoint):
                return reachability.keep_trying(endpoint)
            if self._refused_credentials(exc) is not None:
                return False
            return _code_name(exc) in retry_codes and _code_name(exc) != QUOTA_CODE

        pacer = pacer_for(self._pacer_key(quota), self.pacing)
        # Until the endpoint answers once, short waits: a dead one is told within seconds.
        policy = self.retry
        if reachability.never_reached(endpoint):
            policy = dataclasses.replace(policy, max_s=min(policy.max_s, FIRST_CONTACT_MAX_S))
        backoff = policy.build(retryable)
        while True:
            turn = pacer.wait_turn()
            try:
                result = call(backoff)
            except exceptions.GoogleAPICallError as exc:
                if _is_connect_failure(exc) and reachability.never_reached(endpoint):
                    pacer.admitted(turn)
                    raise TransientError(self._unreachable(endpoint, exc)) from exc
                if (refused := self._refused_credentials(exc)) is not None:
                    pacer.admitted(turn)
                    raise CredentialsError(refused) from exc
                if _code_name(exc) != QUOTA_CODE:
                    pacer.admitted(turn)
                    _raise_unless_tolerated(exc, tolerate=tolerate, uncertain=uncertain)
                    return None
                stalled_s = pacer.refused(turn, exc.message)
                if stalled_s >= self.retry.deadline_s:
                    raise TransientError(
                        f"Vertex AI admitted none of this process's calls against "
                        f"{pacer.key.describe()} for {stalled_s:.0f}s (RESOURCE_EXHAUSTED; "
                        f"last error: {exc.message}): other clients of the project may hold "
                        f"the quota, or it is 0; see {QUOTAS_PAGE.format(project=self.project)}"
                    ) from exc
                continue
            except exceptions.RetryError as exc:
                pacer.admitted(turn)
                cause = exc.cause
                if (
                    cause is not None
                    and _is_connect_failure(cause)
                    and reachability.never_reached(endpoint)
                ):
                    raise TransientError(self._unreachable(endpoint, cause)) from exc
                last = cause.message if isinstance(cause, exceptions.GoogleAPICallError) else cause
                raise TransientError(f"{exc.message} while retrying; last error: {last}") from exc
            except TimeoutError as exc:
                # A long-running operation that did not finish in time.
                pacer.admitted(turn)
                raise TransientError(str(exc)) from exc
            pacer.admitted(turn)
            reachability.reached(endpoint)
            return result

    def _endpoint(self) -> str:
        """Where this backend's calls go: the configured endpoint, else the region's."""
        return self.api_endpoint or ENDPOINT_TEMPLATE.format(region=self.region)

    def _refused_credentials(self, exc: BaseException) -> str | None:
        """The message for a call refused for its credentials (UNAUTHENTICATED), or made
        without them because they could not be had (nothing was sent); None otherwise."""
        said = str(getattr(exc, "message", exc))
        if _code_name(exc) != "UNAUTHENTICATED" and not is_metadata_failure(said):
            return None
        used, endpoint = self._resolved or resolve(self.auth), self._endpoint()
        return used.refused(
            f"Vertex AI at {endpoint}",
            f"{_code_name(exc)}: {said}",
            loopback=_is_loopback(endpoint),
        )

    def _unreachable(self, endpoint: str, exc: BaseException) -> str:
        """The one message for an endpoint no connection could be made to."""
        said = getattr(exc, "message", None) or str(exc)
        waited = reachability.failing_for_s(endpoint)
        if self.api_endpoint:
            fix = (
                f"it is set by {API_ENDPOINT_KEY}: correct it (a fake service prints its "
                "address when it starts), or remove the key to reach Google's "
                f"{ENDPOINT_TEMPLATE.format(region=self.region)}"
            )
        else:
            fix = (
                f"it is region {self.region}'s endpoint: check this machine's network, "
                f"proxy and DNS (or set {API_ENDPOINT_KEY})"
            )
        return reachability.unreachable(
            endpoint,
            f"cannot reach Vertex AI at {endpoint}: no connection could be made for "
            f"{waited:.0f}s ({said}); {fix}. Nothing was submitted",
        )


def _is_connect_failure(exc: BaseException) -> bool:
    return reachability.is_connect_failure(_code_name(exc), str(getattr(exc, "message", exc)))


def _raise_unless_tolerated(
    exc: GoogleAPICallError, *, tolerate: Collection[str], uncertain: Collection[str]
) -> None:
    """Raise the provider error for ``exc``, unless its code is in ``tolerate``."""
    code = _code_name(exc)
    if code in tolerate:
        return
    if code in uncertain:
        raise UncertainError(f"{code}: {exc.message}", code) from exc
    if code in TRANSIENT_CODES:
        raise TransientError(exc.message) from exc
    raise PermanentError(exc.message) from exc


def _custom_job_from_json(body: dict[str, Any]) -> CustomJob:
    from google.cloud.aiplatform_v1.types import CustomJob

    job: CustomJob = CustomJob.wrap(_message_from_json(body, CustomJob.pb()(), "CustomJob"))
    return job


def _tuning_job_from_json(body: dict[str, Any]) -> HyperparameterTuningJob:
    from google.cloud.aiplatform_v1.types import HyperparameterTuningJob

    message = _message_from_json(body, HyperparameterTuningJob.pb()(), "HyperparameterTuningJob")
    job: HyperparameterTuningJob = HyperparameterTuningJob.wrap(message)
    return job


def _message_from_json(body: dict[str, Any], message: Message, kind: str) -> Message:
    from google.protobuf import json_format

    try:
        return json_format.ParseDict(body, message)
    except json_format.ParseError as exc:
        raise PermanentError(f"The request body is not a valid {kind}: {exc}") from exc


#: The raw protobuf message under a proto-plus one (``type(job).pb(job)``): proto-plus
#: builds its class at run time, so its fields have no static type to check.
_RawMessage: TypeAlias = Any


def _job_status(job: CustomJob | HyperparameterTuningJob) -> JobStatus:
    """Map a CustomJob or HyperparameterTuningJob to a JobStatus: plain strings, RFC 3339
    times, and a tuning job's trials."""
    message = type(job).pb(job)

    def rfc3339(field: str) -> str:
        return getattr(message, field).ToJsonString() if message.HasField(field) else ""

    tuning = message.DESCRIPTOR.name == "HyperparameterTuningJob"
    metric_id, goal = primary_metric(message.study_spec) if tuning else ("", "")
    pools, strategy = _shape(message.trial_job_spec if tuning else message.job_spec)
    return JobStatus(
        name=message.name,
        state=job.state.name.removeprefix(_STATE_PREFIX),
        display_name=message.display_name,
        error=message.error.message if message.HasField("error") else "",
        error_code=message.error.code if message.HasField("error") else 0,
        pools=pools,
        strategy=strategy,
        create_time=rfc3339("create_time"),
        start_time=rfc3339("start_time"),
        end_time=rfc3339("end_time"),
        labels=dict(message.labels),
        web_access_uris={} if tuning else dict(message.web_access_uris),
        trials=trials_of(message) if tuning else [],
        metric_id=metric_id,
        goal=goal,
        max_trials=message.max_trial_count if tuning else 0,
    )


def _shape(spec: _RawMessage) -> tuple[tuple[PoolShape, ...], str]:
    """A CustomJobSpec's pools and strategy, as they use quota."""
    from google.protobuf import json_format

    return shape_of_spec(json_format.MessageToDict(spec))


def _created_ns(job: CustomJob | HyperparameterTuningJob) -> int:
    return int(type(job).pb(job).create_time.ToNanoseconds())


def console_url_of(name: str) -> str:
    """The Google Cloud console's page of the job ``name`` (from the name alone, with no
    client library: the stack outputs derive it in the program)."""
    parts = _parse_job_name(name, pipelines=True)
    template = _CONSOLE_URL if _collection(name) == _CUSTOM_JOBS else _TUNING_CONSOLE_URL
    return template.format(
        location=parts["location"], job_id=parts["job_id"], project=parts["project"]
    )


def logs_url_of(name: str) -> str:
    """Cloud Logging, filtered on the logs of the job ``name`` (from the name alone); a
    training pipeline's are its backing job's, which its name does not give: its console
    page, which links them."""
    if _collection(name) == _PIPELINES:
        return console_url_of(name)
    parts = _parse_job_name(name)
    query = _LOGS_QUERY.format(job_id=parts["job_id"])
    return _LOGS_URL.format(query=quote(query, safe=""), project=parts["project"])


#: The collection of each kind of job in a resource name, and the segments it has.
_CUSTOM_JOBS = "customJobs"
_TUNING_JOBS = "hyperparameterTuningJobs"
_PIPELINES = "trainingPipelines"
_NAME_SEGMENTS = 6


def _collection(name: str) -> str:
    """The collection of a resource name's ID (``customJobs``, ``trainingPipelines``...)."""
    parts = name.split("/")
    return parts[4] if len(parts) == _NAME_SEGMENTS else ""


def _is_tuning_name(name: str) -> bool:
    """Whether ``name`` is a HyperparameterTuningJob's resource name."""
    return _collection(name) == _TUNING_JOBS


def _parse_job_name(name: str, *, pipelines: bool = False) -> dict[str, str]:
    """project, location and job_id of a CustomJob or HyperparameterTuningJob name
    (``projects/P/locations/L/customJobs/ID``), or with ``pipelines`` a TrainingPipeline
    one, read as the client library's path parsers read it, without loading the library.
    (A pipeline's logs are its backing job's: no name of it finds them.)"""
    parts = name.split("/")
    shaped = len(parts) == _NAME_SEGMENTS and (parts[0], parts[2]) == ("projects", "locations")
    kinds = (_CUSTOM_JOBS, _TUNING_JOBS, _PIPELINES) if pipelines else (_CUSTOM_JOBS, _TUNING_JOBS)
    if shaped and parts[4] in kinds and all(parts):
        return {"project": parts[1], "location": parts[3], "job_id": parts[5]}
    raise ValueError(
        f"{name!r} is not a CustomJob resource name "
        "(projects/PROJECT/locations/LOCATION/customJobs/ID) nor a HyperparameterTuningJob one "
        "(.../hyperparameterTuningJobs/ID)"
    )


def _code_name(exc: BaseException) -> str:
    """The gRPC status code name of a Google API error ("" for other exceptions)."""
    code = getattr(exc, "grpc_status_code", None)
    return code.name if code is not None else ""


def label_filter(labels: Mapping[str, str | None]) -> str:
    """A list filter selecting the jobs that carry every label of ``labels``: the value
    given, or any value for None (``labels.KEY:*``, the existence test the list methods'
    ``filter`` documents in job_service.proto), the terms joined by AND."""
    return " AND ".join(
        f"labels.{key}:*" if value is None else f"labels.{key}={_quoted(value)}"
        for key, value in labels.items()
    )


def _quoted(value: str) -> str:
    """A string literal for an AIP-160 filter."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
