"""Text lines decoded as the original's `convert_to_unicode` does: bytes that are not UTF-8 are dropped, and
counted so that a run can say so once, at its end."""


class Utf8Decoder:
    """Decodes lines as UTF-8, dropping the bytes that are not (the original's "ignore"), and counts them; a byte
    order mark at the start of a file (line 1) is dropped too.

    Example:
    >>> decoder = Utf8Decoder()
    >>> decoder.decode(b"caf\\xe9 au lait", "menu.txt", 7), decoder.decode(b"\\xff\\xfeok", "menu.txt", 9)
    ('caf au lait', 'ok')
    >>> decoder.warning()
    'dropped 3 bytes that are not UTF-8, as the original does (the first on menu.txt:7)'
    """

    def __init__(self):
        self.bad_bytes = 0
        self.first = ""

    def decode(self, raw, path, line_number):
        if line_number == 1:
            raw = raw.removeprefix(b"\xef\xbb\xbf")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", "ignore")
            self.bad_bytes += len(raw) - len(text.encode("utf-8"))
            self.first = self.first or f"{path}:{line_number}"
            return text

    def warning(self):
        """The end-of-run warning, or None when every byte was UTF-8."""
        return utf8_warning(self.bad_bytes, self.first)


def utf8_warning(bad_bytes, first):
    """The warning for `bad_bytes` dropped bytes, the first on line `first` ("path:line"); None for none."""
    if not bad_bytes:
        return None
    return f"dropped {bad_bytes:,} bytes that are not UTF-8, as the original does (the first on {first})"


def not_utf8(raw):
    """Why the bytes `raw` are not UTF-8 text, for a message naming their line or flag; None when they are.

    Example:
    >>> not_utf8("café".encode("latin-1")), not_utf8("café".encode("utf-8"))
    ('byte 0xe9 at offset 3 is not UTF-8', None)
    """
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"byte 0x{raw[e.start]:02x} at offset {e.start} is not UTF-8"
    return None
