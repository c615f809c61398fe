"""The A2A protobuf messages of the gRPC binding, generated: ``a2a_v1_pb2`` (v1.0, the
spec's ``lf.a2a.v1``) and ``a2a_v0_3_pb2`` (v0.3, ``a2a.v1``). They need ``protobuf``
alone (the ``grpc`` extra). Never edit them: ``scripts/regen_grpc_pb.py`` makes them again
and says how they differ from the spec's ``a2a.proto`` (no HTTP annotations; the proto
package under ``a2a_anyio.``, so that a2a-sdk's modules can share the process).
"""
