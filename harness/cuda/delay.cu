// The harness's own helper: keeps the stream busy for `ns` nanoseconds before a timed
// region, so that the host's launch overhead is hidden behind it and not counted in the
// events' time (used for --hot timing; cold timing has the L2 flush in front instead).
extern "C" __global__ void harness_delay(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
