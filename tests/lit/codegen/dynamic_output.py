# RUN: %python %S/../inputs/make_model.py non_zero %t.onnx
# RUN: onnxc %t.onnx --emit llvm -o - | filecheck %s

# An output whose shape depends on input values (ABI version 2 on): the signature
# marks it dynamic with -1 for the run-time dim, the library mallocs its shape
# and data in one block and copies the scratch result into it, and exports
# onnxc_free_tensor to release it; run_main_graph frees it again on failure.
# CHECK-DAG: @onnxc_signature_json = private {{.*}}\22outputs\22: [{\22name\22: \22y\22, \22dtype\22: \22int64\22, \22shape\22: [2, -1], \22dynamic\22: true}]
# CHECK-DAG: call {{.*}}ptr @malloc(
# CHECK-DAG: call void @llvm.memcpy.p0.p0.i64(
# CHECK-DAG: define {{.*}}i32 @onnxc_abi_version()
# CHECK-DAG: ret i32 3
# CHECK-DAG: define void @onnxc_free_tensor(ptr {{.*}})
