"""Tests of quality.py's scorer and parser on hand-made judgements and runs
whose scores are worked out by hand below. Run: python3 -m unittest
discover -s scripts/quality (quality_test.go runs it in go test)."""

import math
import os
import tempfile
import unittest

import quality

L2, L3, L4, L5 = math.log2(2), math.log2(3), math.log2(4), math.log2(5)


def write(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


class Scorer(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        # q1: a (grade 1, gain 4), b (grade 3, gain 2), c (-1, gain 0).
        # q2: d (grade 4, gain 1). q3: only e at -1, so it is not scored.
        self.qrels = quality.qrels(write(self.dir, "qrels", "1 a 1\n1 b 3 \n1 c -1\n2 d 4\n\n3 e -1\n"))

    def run_of(self, text):
        return quality.read_run(write(self.dir, "run", text))

    def test_gain(self):
        self.assertEqual([quality.gain(g) for g in (1, 2, 3, 4, -1, 0, 5)], [4, 3, 2, 1, 0, 0, 0])

    def test_perfect(self):
        run = self.run_of("1 Q0 a 1 9 t\n1 Q0 b 2 8 t\n2 Q0 d 1 5 t\n")
        self.assertEqual(quality.evaluate(self.qrels, run), {"ndcg@10": 1.0, "recall@100": 1.0, "queries": 2})

    def test_by_hand(self):
        # q1: b, x, a -> DCG 2/log2(2) + 4/log2(4) = 4; ideal 4/log2(2) + 2/log2(3).
        # q2 not answered: 0 and 0. The rank column orders the run, not the
        # lines nor the scores, and a repeated document keeps its first place.
        run = self.run_of("1 Q0 a 3 1 t\n1 Q0 b 1 1 t\n1 Q0 x 2 7 t\n1 Q0 b 4 0 t\n")
        self.assertEqual(run, {"1": ["b", "x", "a"]})
        got = quality.evaluate(self.qrels, run)
        ndcg1 = (2 / L2 + 4 / L4) / (4 / L2 + 2 / L3)
        self.assertAlmostEqual(got["ndcg@10"], ndcg1 / 2)
        self.assertAlmostEqual(got["recall@100"], (2 / 2 + 0) / 2)
        self.assertEqual(got["queries"], 2)

    def test_cutoffs(self):
        # a at rank 11 counts for nothing in nDCG@10 and fully in recall;
        # d at rank 101 counts for nothing in either.
        q1 = "".join(f"1 Q0 n{i} {i} 0 t\n" for i in range(1, 11)) + "1 Q0 a 11 0 t\n1 Q0 b 12 0 t\n"
        q2 = "".join(f"2 Q0 n{i} {i} 0 t\n" for i in range(1, 101)) + "2 Q0 d 101 0 t\n"
        got = quality.evaluate(self.qrels, self.run_of(q1 + q2))
        self.assertEqual(got, {"ndcg@10": 0.0, "recall@100": 0.5, "queries": 2})
        # Now d at rank 4 of q2: nDCG 1/log2(5) over an ideal of 1/log2(2).
        got = quality.evaluate(self.qrels, self.run_of(q1 + "2 Q0 x 1 0 t\n2 Q0 y 2 0 t\n2 Q0 z 3 0 t\n2 Q0 d 4 0 t\n"))
        self.assertAlmostEqual(got["ndcg@10"], (0 + (1 / L5) / (1 / L2)) / 2)
        self.assertAlmostEqual(got["recall@100"], 1.0)

    def test_bad_run(self):
        with self.assertRaises(ValueError):
            self.run_of("1 Q0 a 1 9\n")

    def test_write_read(self):
        path = os.path.join(self.dir, "written")
        quality.write_run(path, {"7": [("a", 2.5), ("b", 1)]}, "tag")
        with open(path, encoding="utf-8") as f:
            self.assertEqual(f.read(), "7 Q0 a 1 2.5 tag\n7 Q0 b 2 1 tag\n")
        self.assertEqual(quality.read_run(path), {"7": ["a", "b"]})


class Collection(unittest.TestCase):
    def test_smart_format(self):
        d = tempfile.mkdtemp()
        write(d, "cran.all.1400", ".I 1\r\n.T\r\na title\r\n.A\r\nx\r\n.B\r\ny\r\n.W\r\nsome\r\n  text\r\n"
              ".A\r\nmore\r\n.B\r\ntext\r\n.I 2\r\n.T\r\n.A\r\n.B\r\n.W\r\n.I 3\r\n.T\r\nt\r\n.W\r\none\r\n.W\r\ntwo\r\n")
        write(d, "cran.qry", ".I 001\n.W\nfirst\nquery .\n.I 004\n.W\nsecond\n")
        self.assertEqual(quality.documents(d), [("1", "a title", "some text more text"), ("2", "", ""), ("3", "t", "one two")])
        self.assertEqual(quality.queries(d), [("1", "first query ."), ("2", "second")])

    def test_cranfield(self):
        docs, qs, judged = quality.documents(), quality.queries(), quality.qrels()
        self.assertEqual((len(docs), len(qs), len(judged)), (1400, 225, 225))
        self.assertEqual([d[0] for d in docs], [str(i) for i in range(1, 1401)])
        self.assertEqual(docs[0][1], "experimental investigation of the aerodynamics of a wing in a slipstream .")
        self.assertEqual(qs[2][1], "what problems of heat conduction in composite slabs have been solved so far .")
        self.assertEqual(sum(len(v) for v in judged.values()), 1837)

    def test_binary_qrels(self):
        # CISI.REL's and Medline's lines: every pair named is relevant, grade 1.
        d = tempfile.mkdtemp()
        cisi = quality.qrels(write(d, "CISI.REL", "     1     28\t0\t0.000000\r\n     2     7\t0\t0.000000\r\n"), graded=False)
        self.assertEqual(cisi, {"1": {"28": 1}, "2": {"7": 1}})
        med = quality.qrels(write(d, "MED.REL", "1 0 13 1\n1 0 14 1\n"), graded=False)
        self.assertEqual(med, {"1": {"13": 1, "14": 1}})

    def test_cisi(self):
        docs, qs, judged = quality.load("cisi")
        self.assertEqual((len(docs), len(qs), len(judged)), (1460, 112, 76))
        self.assertEqual([d[0] for d in docs], [str(i) for i in range(1, 1461)])
        # ".T " ends in a space: still the title's mark.
        self.assertEqual(docs[1][1], "Use Made of Technical Libraries")
        self.assertTrue(docs[0][2].startswith("The present study is a history of the DEWEY Decimal"))
        self.assertEqual(sum(len(v) for v in judged.values()), 3114)
        self.assertTrue(all(d[1] and d[2] for d in docs))

    def test_medline(self):
        docs, qs, judged = quality.load("medline")
        self.assertEqual((len(docs), len(qs), len(judged)), (1033, 30, 30))
        self.assertEqual(qs[0], ("1", "the crystalline lens in vertebrates, including humans."))
        self.assertEqual(sum(len(v) for v in judged.values()), 696)
        self.assertTrue(all(d[1] == "" and d[2] for d in docs))  # No titles.


if __name__ == "__main__":
    unittest.main()
