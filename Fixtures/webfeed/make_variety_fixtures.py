#!/usr/bin/env python3
"""Writes the encoding and recovery fixtures under feeds/encodings and feeds/recovery.

One RSS document per encoding family, each with a title and an item in a language the encoding
is made for, encoded by Python's codecs (so the bytes are what the encoding's spec says); and one
document per class of not-well-formed-but-readable XML that feed readers recover. Run it again to
regenerate; WebFeedVarietyTests reads the titles back.
"""
from pathlib import Path

HERE = Path(__file__).resolve().parent / "feeds"

# (file, encoding label written in the declaration, Python codec, feed title, item title)
ENCODINGS = [
    ("gb2312.xml", "gb2312", "gb2312", "中文新闻", "北京今天天气晴朗"),
    ("gbk.xml", "GBK", "gbk", "繁體與简体", "镕基说话"),
    ("gb18030.xml", "GB18030", "gb18030", "中文新闻", "𠀀 与 €"),
    ("big5.xml", "big5", "big5", "台灣新聞", "今天天氣晴朗"),
    ("shift_jis.xml", "Shift_JIS", "shift_jis", "日本のニュース", "東京は晴れです"),
    ("euc-jp.xml", "EUC-JP", "euc_jp", "日本のニュース", "大阪は雨です"),
    ("iso-2022-jp.xml", "ISO-2022-JP", "iso2022_jp", "日本のニュース", "京都は曇りです"),
    ("euc-kr.xml", "EUC-KR", "euc_kr", "한국 뉴스", "서울은 맑음"),
    ("koi8-r.xml", "KOI8-R", "koi8_r", "Новости", "В Москве солнечно"),
    ("koi8-u.xml", "KOI8-U", "koi8_u", "Новини", "У Києві ґрунт"),
    ("windows-1251.xml", "windows-1251", "cp1251", "Новости", "Погода в Софии"),
    ("windows-1250.xml", "windows-1250", "cp1250", "Zprávy", "Příliš žluťoučký kůň"),
    ("windows-1253.xml", "windows-1253", "cp1253", "Ειδήσεις", "Καλημέρα"),
    ("windows-1254.xml", "windows-1254", "cp1254", "Haberler", "Çağrı ışık"),
    ("windows-1255.xml", "windows-1255", "cp1255", "חדשות", "שלום עולם"),
    ("windows-1256.xml", "windows-1256", "cp1256", "أخبار", "مرحبا بالعالم"),
    ("windows-1257.xml", "windows-1257", "cp1257", "Naujienos", "Ąčęėįšųūž"),
    ("windows-1258.xml", "windows-1258", "cp1258", "Cà phê", "Đêm và bơ"),
    ("iso-8859-2.xml", "ISO-8859-2", "iso8859_2", "Wiadomości", "Zażółć gęślą jaźń"),
    ("iso-8859-5.xml", "ISO-8859-5", "iso8859_5", "Новости", "Привет"),
    ("iso-8859-7.xml", "iso-8859-7", "iso8859_7", "Ειδήσεις", "Η Αθήνα σήμερα"),
    ("iso-8859-9.xml", "ISO-8859-9", "iso8859_9", "Haberler", "İstanbul'da güneş"),
    ("iso-8859-15.xml", "ISO-8859-15", "iso8859_15", "Nouvelles", "Œuvre à 5 €"),
    ("iso-8859-16.xml", "ISO-8859-16", "iso8859_16", "Știri", "Țară și oraș"),
    ("macroman.xml", "macintosh", "mac_roman", "Café", "Crème brûlée ™"),
    ("utf-16be-bom.xml", "UTF-16", "utf-16-be", "UTF-16 big-endian", "Grüße 日本"),
]


def rss(label, title, item):
    declaration = f'<?xml version="1.0" encoding="{label}"?>\n' if label else ""
    return (declaration + '<rss version="2.0"><channel>\n'
            f"<title>{title}</title><link>https://example.org/</link>\n"
            f"<item><guid>1</guid><title>{item}</title><description>{item}</description></item>\n"
            "</channel></rss>\n")


def main():
    out = HERE / "encodings"
    out.mkdir(exist_ok=True)
    for name, label, codec, title, item in ENCODINGS:
        data = rss(label, title, item).encode(codec)
        if codec == "utf-16-be":
            data = b"\xfe\xff" + data
        (out / name).write_bytes(data)
    # Declares UTF-8, is windows-1252 (as a Brazilian feed was): read as windows-1252.
    (out / "utf8-declared-windows1252.xml").write_bytes(rss("UTF-8", "Notícias", "Ação “rápida” – já").encode("cp1252"))
    # No declaration: the HTTP charset says (the tests pass text/xml; charset=iso-8859-7).
    (out / "http-charset-greek.xml").write_bytes(rss("", "Ειδήσεις", "Καλημέρα Ελλάδα").encode("iso8859_7"))
    # Names an encoding nobody knows: one sentence.
    (out / "unknown-encoding.xml").write_bytes(rss("x-no-such-encoding", "T", "I").encode("ascii"))

    out = HERE / "recovery"
    out.mkdir(exist_ok=True)
    item = '<item><guid>{0}</guid><title>{1}</title><link>https://example.org/{0}</link></item>'
    head = '<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel><title>Recovered</title>\n'
    tail = '</channel></rss>\n'
    cases = {
        "whitespace-before-declaration.xml": "\n\n   " + head + item.format(1, "First") + tail,
        "undeclared-prefix.xml": head + '<item><guid>1</guid><title>First</title><dc:creator>Ann Author</dc:creator>'
                                 '<media:thumbnail url="https://example.org/t.jpg"/></item>' + tail,
        "bare-ampersand.xml": head + item.format(1, "Fish & Chips") + item.format(2, "AT&T; R&D") + tail,
        "html-entities.xml": head + item.format(1, "Caf&eacute;&nbsp;cr&egrave;me &mdash; &copy; 2026") + tail,
        "truncated.xml": head + item.format(1, "First") + item.format(2, "Second") + '<item><guid>3</guid><title>Thi',
        "control-characters.xml": head + item.format(1, "Bell\x07 and\x0b tab\x01s") + tail,
    }
    for name, text in cases.items():
        (out / name).write_bytes(text.encode("utf-8"))


if __name__ == "__main__":
    main()
