# `python3 unrcc.py FILE.rcc OUTDIR` — unpacks a Qt binary resource file (the .rcc bundles under
# /usr/share/gcompris-qt/rcc/ of Debian's gcompris-qt-data), so its photos and the README that gives
# each one's licence can be read. Handles rcc format versions 1-3, zlib-compressed entries.
import struct, sys, zlib, os
def unrcc(path, out):
    b = open(path,'rb').read()
    assert b[:4] == b'qres', b[:4]
    ver, tree, data, names = struct.unpack('>iiii', b[4:20])
    nsz = 14 if ver == 1 else 22
    def name(off):
        o = names + off; ln = struct.unpack('>H', b[o:o+2])[0]
        return b[o+6:o+6+2*ln].decode('utf-16-be')
    def walk(idx, prefix):
        o = tree + idx*nsz
        noff, flags = struct.unpack('>iH', b[o:o+6])
        nm = name(noff) if idx else ''
        if flags & 2:
            cnt, first = struct.unpack('>ii', b[o+6:o+14])
            for c in range(first, first+cnt): walk(c, prefix + nm + '/')
        else:
            doff = struct.unpack('>i', b[o+10:o+14])[0]
            p = data + doff; sz = struct.unpack('>I', b[p:p+4])[0]; d = b[p+4:p+4+sz]
            if flags & 1: d = zlib.decompress(d[4:])
            elif flags & 4: import zstandard; d = zstandard.decompress(d)
            fp = os.path.join(out, (prefix+nm).lstrip('/')); os.makedirs(os.path.dirname(fp), exist_ok=True); open(fp,'wb').write(d)
    walk(0, '')
unrcc(sys.argv[1], sys.argv[2])
