"""A Python port of vlbias's random streams (include/vlbias/core/rng.h, src/core/rng.cpp), so
reference scripts can reproduce exactly which rows a seeded procedure draws (KID subsets,
seeded sampling). SplitMix64 seeding, xoshiro256**, Lemire's unbiased bounded integers.
"""
MASK = (1 << 64) - 1


def splitmix64(state):
    """Returns (new_state, output)."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def derive_seed(seed, task):
    state = (seed ^ ((0xA0761D6478BD642F * (task + 1)) & MASK)) & MASK
    return splitmix64(state)[1]


def _rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


class Rng:
    def __init__(self, seed, stream=0):
        _, base = splitmix64(seed & MASK)
        st = base ^ ((stream * 0xD1B54A32D192ED03 + 0x8CB92BA72F3D8DD7) & MASK)
        self.s = []
        for _ in range(4):
            st, word = splitmix64(st)
            self.s.append(word)

    def next_u64(self):
        s = self.s
        result = (_rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    def uniform_index(self, bound):
        m = self.next_u64() * bound
        low = m & MASK
        if low < bound:
            threshold = ((1 << 64) - bound) % bound
            while low < threshold:
                m = self.next_u64() * bound
                low = m & MASK
        return m >> 64

    def uniform01(self):
        return (self.next_u64() >> 11) * 2.0 ** -53


def partial_shuffle(rng, n, m):
    """The first m indices of a forward Fisher-Yates shuffle of range(n)."""
    idx = list(range(n))
    for i in range(m):
        j = i + rng.uniform_index(n - i)
        idx[i], idx[j] = idx[j], idx[i]
    return idx[:m]
