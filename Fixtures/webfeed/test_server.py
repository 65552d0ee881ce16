#!/usr/bin/env python3
"""Self-check for the web-feed fixture server: python3 Fixtures/webfeed/test_server.py"""
import http.client
import json
import os
import subprocess
import sys
import unittest
import xml.etree.ElementTree as ET

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "server.py")


class ServerTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.proc = subprocess.Popen([sys.executable, SERVER, "--port", "0", "--exit-on-stdin-eof", "--feeds", "3", "--items", "4",
                                     "--extra-ports", "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        cls.ports = [int(cls.proc.stdout.readline().strip().rsplit(":", 1)[1]) for _ in range(2)]

    @classmethod
    def tearDownClass(cls):
        cls.proc.stdin.close()
        cls.proc.wait(timeout=10)

    def request(self, method, path, headers=None, port=None):
        conn = http.client.HTTPConnection("127.0.0.1", port or self.ports[0], timeout=10)
        conn.request(method, path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp, resp.read()

    def test_feed_and_conditional_get(self):
        status, resp, body = self.request("GET", "/feeds/1.xml")
        self.assertEqual(status, 200)
        items = ET.fromstring(body).findall("./channel/item")
        self.assertEqual(len(items), 4)
        etag, modified = resp.getheader("ETag"), resp.getheader("Last-Modified")
        self.assertEqual(self.request("GET", "/feeds/1.xml", {"If-None-Match": etag})[0], 304)
        self.assertEqual(self.request("GET", "/feeds/1.xml", {"If-Modified-Since": modified})[0], 304)
        self.request("POST", "/_control/edit?feed=1&item=2")
        self.assertEqual(self.request("GET", "/feeds/1.xml", {"If-None-Match": etag})[0], 200)
        self.request("POST", "/_control/add?feed=1")
        self.assertEqual(len(ET.fromstring(self.request("GET", "/feeds/1.xml")[2]).findall("./channel/item")), 5)
        self.request("POST", "/_control/window?feed=1&size=2")
        self.assertEqual(len(ET.fromstring(self.request("GET", "/feeds/1.xml")[2]).findall("./channel/item")), 2)

    def test_atom(self):
        status, _, body = self.request("GET", "/atom/0.xml")
        self.assertEqual(status, 200)
        self.assertEqual(len(ET.fromstring(body).findall("{http://www.w3.org/2005/Atom}entry")), 4)

    def test_redirects_gone_limited_cached_slow(self):
        for code in (301, 302, 307, 308):
            status, resp, _ = self.request("GET", f"/redirect/{code}/feeds/0.xml")
            self.assertEqual((status, resp.getheader("Location")), (code, "/feeds/0.xml"))
        self.assertEqual(self.request("GET", "/gone")[0], 410)
        status, resp, _ = self.request("GET", "/limited")
        self.assertEqual((status, resp.getheader("Retry-After")), (429, "1"))
        status, resp, _ = self.request("GET", "/cached/600/feeds/0.xml")
        self.assertEqual((status, resp.getheader("Cache-Control")), (200, "max-age=600"))
        self.assertEqual(self.request("GET", "/slow/50/feeds/0.xml")[0], 200)
        self.assertEqual(self.request("GET", "/static/rss2.xml")[0], 200)
        self.assertEqual(self.request("GET", "/static/../server.py")[0], 404)

    def test_opml_and_ports(self):
        body = self.request("GET", "/opml?ports=1")[2]
        urls = [o.get("xmlUrl") for o in ET.fromstring(body).iter("outline") if o.get("xmlUrl")]
        self.assertEqual(len(urls), 3)
        self.assertEqual({u.split("/")[2] for u in urls}, {f"127.0.0.1:{p}" for p in self.ports})
        self.assertEqual(self.request("GET", "/feeds/2.xml", port=self.ports[1])[0], 200)

    def test_site_pages(self):
        status, resp, body = self.request("GET", "/site/1/")
        self.assertEqual((status, resp.getheader("Content-Type")), (200, "text/html; charset=utf-8"))
        self.assertIn(b'rel="alternate" type="application/atom+xml" title="Feed 1" href="../../atom/1.xml"', body)
        status, _, body = self.request("GET", "/site/none/")
        self.assertEqual(status, 200)
        self.assertNotIn(b"atom+xml", body)
        self.assertEqual(self.request("GET", "/site/9/")[0], 404)
        self.assertIn(b'<base href="/feeds/">', self.request("GET", "/site/many/")[2])

    def test_stats(self):
        self.request("POST", "/_control/reset-stats")
        self.request("GET", "/feeds/0.xml")
        stats = json.loads(self.request("GET", "/_control/stats")[2])
        self.assertEqual(stats["requests"]["GET /feeds/0.xml"], {"200": 1})


if __name__ == "__main__":
    unittest.main()
