//! Words for warnings facts (see [`super`]).
