# RUN: %python %S/../inputs/make_model.py mnist %t.onnx
# RUN: onnxc %t.onnx --emit llvm -o - | filecheck %s

# Loops become LLVM IR: the C ABI functions are the only exported ones, the
# graph is internal, weights live in one external symbol (the ELF object
# linked beside), the signature is a constant JSON string, and the arena of
# intermediate buffers is the calling thread's, kept by the runtime across runs
# (never freed here).
# CHECK-DAG: @onnxc_weights = external {{.*}}constant [{{[0-9]+}} x i8], align 64
# CHECK-DAG: @onnxc_signature_json = private {{.*}}\22inputs\22: [{\22name\22: \22input\22, \22dtype\22: \22float32\22, \22shape\22: [1, 1, 28, 28]}]
# CHECK-DAG: define internal {{.*}}i32 @main_graph(
# CHECK-DAG: define {{.*}}i32 @run_main_graph(ptr {{.*}}, i64 {{.*}}, ptr {{.*}}, i64 {{.*}})
# CHECK-DAG: define {{.*}}ptr @onnxc_signature()
# CHECK-DAG: define {{.*}}i32 @onnxc_abi_version()
# CHECK-DAG: call ptr @onnxc_thread_arena(i64 {{[0-9]+}})
# CHECK-DAG: declare noalias ptr @onnxc_thread_arena(i64)
