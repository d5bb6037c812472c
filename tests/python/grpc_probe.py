#!/usr/bin/env python3
"""A generic gRPC client, as an operator's tools would be: it has no copy of
orchard's proto and learns everything from the server (reflection), and
speaks the standard health protocol (grpc.health.v1).

    grpc_probe.py services ADDR             the services, by reflection (JSON)
    grpc_probe.py health ADDR [SERVICE]     one health check (prints the status)
    grpc_probe.py wait ADDR STATUS SECONDS  polls health of the whole server
                                            and of every orchard service
                                            until all are STATUS
    grpc_probe.py call ADDR SERVICE METHOD JSON
                                            a unary call built from the
                                            reflected descriptors (JSON out)

Exit codes: 0 success, 1 the check failed, 3 the Python packages are
missing (pip install -r tests/python/requirements.txt).
"""

import json
import sys
import time

try:
    import grpc
    from google.protobuf import descriptor_pool, json_format, message_factory
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
        ProtoReflectionDescriptorDatabase,
    )
except ImportError as e:
    print(
        f"grpc_probe.py: {e}: install the client with "
        "`pip install -r tests/python/requirements.txt`",
        file=sys.stderr,
    )
    sys.exit(3)

ORCHARD_SERVICES = ("orchard.v1.WorkerService", "orchard.v1.JobService")


def services(channel):
    """ListServices over the reflection stream."""
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    names = []
    for response in stub.ServerReflectionInfo(iter([request]), timeout=10):
        if response.HasField("error_response"):
            raise RuntimeError(response.error_response.error_message)
        names.extend(s.name for s in response.list_services_response.service)
    return sorted(names)


def health(channel, service=""):
    """One Check; a service the server does not know is reported as such."""
    stub = health_pb2_grpc.HealthStub(channel)
    try:
        response = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
    except grpc.RpcError as e:
        if e.code() == grpc.StatusCode.NOT_FOUND:
            return "NOT_FOUND"
        raise
    return health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)


def wait(channel, want, seconds):
    deadline = time.monotonic() + seconds
    names = ("",) + ORCHARD_SERVICES
    while True:
        seen = {name or "(server)": health(channel, name) for name in names}
        if all(status == want for status in seen.values()):
            print(json.dumps(seen))
            return 0
        if time.monotonic() > deadline:
            print(f"still not {want} after {seconds} s: {json.dumps(seen)}", file=sys.stderr)
            return 1
        time.sleep(0.2)


def call(channel, service, method, request_json):
    """A unary call whose request and response types come from reflection."""
    pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))
    method_desc = pool.FindServiceByName(service).FindMethodByName(method)
    request_cls = message_factory.GetMessageClass(method_desc.input_type)
    response_cls = message_factory.GetMessageClass(method_desc.output_type)
    invoke = channel.unary_unary(
        f"/{service}/{method}",
        request_serializer=request_cls.SerializeToString,
        response_deserializer=response_cls.FromString,
    )
    response = invoke(json_format.Parse(request_json, request_cls()), timeout=10)
    print(json_format.MessageToJson(response, preserving_proto_field_name=True))
    return 0


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    command, addr = argv[1], argv[2]
    with grpc.insecure_channel(addr) as channel:
        if command == "services":
            print(json.dumps(services(channel)))
            return 0
        if command == "health":
            print(health(channel, argv[3] if len(argv) > 3 else ""))
            return 0
        if command == "wait" and len(argv) == 5:
            return wait(channel, argv[3], float(argv[4]))
        if command == "call" and len(argv) == 6:
            return call(channel, argv[3], argv[4], argv[5])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
