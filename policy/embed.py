#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Embed a text file in C: embed.py INPUT OUTPUT.

Writes policy_default_data[] (the bytes of INPUT followed by a NUL) and
policy_default_size (the number of bytes, without the NUL), as declared in
policy_int.h, so the default policy works without installed data files.
"""
import sys


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, 'rb') as f:
        data = f.read()
    if b'\0' in data:
        sys.exit('embed.py: %s contains a NUL byte' % src)
    out = ['/* Generated from %s by embed.py: do not edit. */' % src.split('/')[-1],
           '#include "policy_int.h"', '',
           'const char policy_default_data[] = {']
    for i in range(0, len(data), 12):
        out.append('\t' + ' '.join('0x%02x,' % b for b in data[i:i + 12]))
    out += ['\t0x00', '};', '',
            'const size_t policy_default_size = %d;' % len(data), '']
    with open(dst, 'w') as f:
        f.write('\n'.join(out))


if __name__ == '__main__':
    main()
