"""The provider plugin: the job resources for Pulumi programs in any language.

``vertex_training.plugin.provider`` hosts the job resources' operations
(``vertex_training.resources``) behind the plugin protocol; ``schema`` writes the
package schema from the job's typed keys and the docs; ``shapes`` converts between the
schema's naming and the stack config's. ``python -m vertex_training.plugin`` serves it
(the engine starts it through ``provider/pulumi-resource-vertex-training``). docs/plugin.md
is the guide.

The Pulumi SDK's provider modules (``pulumi.provider``) import its own copy of
``google.rpc.Status`` (``pulumi/runtime/proto/status_pb2``, registered as the file
``google/protobuf/status.proto``), while the Google client libraries register the same
message from ``google/rpc/status.proto``: the second registration of one name fails
("duplicate symbol 'google.rpc.Status'"). The SDK uses its copy for nothing but building
that message, the same on the wire, so importing this package gives the SDK Google's
module under its name first.
"""

import sys

from google.rpc import status_pb2

sys.modules.setdefault("pulumi.runtime.proto.status_pb2", status_pb2)
