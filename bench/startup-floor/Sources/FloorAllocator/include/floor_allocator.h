// Referenced from Swift so the object holding malloc_conf is linked.
int floor_allocator_linked(void);
