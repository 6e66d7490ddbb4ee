//! Tests of [`super`].

use super::head_room;

#[test]
fn head_room_scales_with_free_space() {
    assert_eq!(head_room(10 << 20), 1 << 20);
    assert_eq!(head_room(100 << 30), 64 << 20);
    assert_eq!(head_room(0), 0);
}
