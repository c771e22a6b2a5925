"""The engine id generator: how display names become ids, and how taken ids are avoided."""

import doctest
import random
import re
import unittest

from tests import support  # noqa: F401
from ai_engine_manager.engine_id import generator
from ai_engine_manager.engine_id.generator import generate_engine_id, sanitize_display_name

ID_PATTERN = re.compile(r"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$")


class SanitizeTest(unittest.TestCase):
    def test_display_names_become_valid_bases(self) -> None:
        cases = {
            "Churn model": "churn-model",
            "My_Engine": "my-engine",
            "  spaced  out  ": "spaced--out",
            "--dashes--": "dashes",
            "1st Engine!": "st-engine",
            "123": "",
            "!!!": "",
            "": "",
            "Ünïcode Ëngine": "ncode-ngine",
            "a": "a",
            "UPPER": "upper",
            "tab\tand\nnewline": "tab-and-newline",
            "dots.and/slashes": "dotsandslashes",
            "engine-": "engine",
            "_x_": "x",
        }
        for given, wanted in cases.items():
            with self.subTest(given=given):
                self.assertEqual(sanitize_display_name(given), wanted)

    def test_long_names_are_cut_to_58_without_a_trailing_hyphen(self) -> None:
        self.assertEqual(len(sanitize_display_name("a" * 100)), 58)
        cut = sanitize_display_name("a" * 57 + "-b")
        self.assertEqual(cut, "a" * 57)
        self.assertTrue(ID_PATTERN.match(cut + "-1234"))

    def test_every_result_is_a_valid_id(self) -> None:
        rng = random.Random(7)
        alphabet = "abcXYZ019 _-.!é\t"
        for _ in range(500):
            name = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
            base = sanitize_display_name(name)
            if base:
                self.assertRegex(base, ID_PATTERN, name)
                self.assertLessEqual(len(base), 58)


class GenerateTest(unittest.TestCase):
    def test_bare_base_when_free(self) -> None:
        asked: list[str] = []
        self.assertEqual(generate_engine_id("Churn model", "dai", lambda i: asked.append(i) or False), "churn-model")
        self.assertEqual(asked, ["churn-model"])

    def test_fallback_base_per_engine_type(self) -> None:
        self.assertEqual(generate_engine_id("", "dai", lambda i: False), "new-dai-engine")
        self.assertEqual(generate_engine_id("123", "h2o", lambda i: False), "new-h2o-engine")
        self.assertEqual(generate_engine_id("!!", "sandbox", lambda i: False), "new-sandbox-engine")

    def test_suffix_when_taken(self) -> None:
        taken = {"churn-model"}
        engine_id = generate_engine_id("Churn model", "dai", lambda i: i in taken, rng=random.Random(1))
        self.assertRegex(engine_id, r"^churn-model-[1-9][0-9]{3}$")
        self.assertRegex(engine_id, ID_PATTERN)

    def test_suffixed_ids_of_long_names_stay_within_63(self) -> None:
        engine_id = generate_engine_id("x" * 200, "dai", lambda i: len(i) == 58, rng=random.Random(2))
        self.assertEqual(len(engine_id), 63)
        self.assertRegex(engine_id, ID_PATTERN)

    def test_keeps_trying_suffixes_until_one_is_free(self) -> None:
        asked: list[str] = []

        def exists(candidate: str) -> bool:
            asked.append(candidate)
            return len(asked) < 10

        engine_id = generate_engine_id("busy", "dai", exists, rng=random.Random(3))
        self.assertEqual(len(asked), 10)
        self.assertEqual(engine_id, asked[-1])

    def test_gives_up_after_fifty_attempts(self) -> None:
        asked: list[str] = []
        with self.assertRaisesRegex(ValueError, "could not generate"):
            generate_engine_id("busy", "dai", lambda i: asked.append(i) or True, rng=random.Random(4))
        self.assertEqual(len(asked), 1 + generator.SUFFIXED_ATTEMPTS)
        self.assertEqual(len(asked), 50)

    def test_existence_errors_propagate(self) -> None:
        def exists(candidate: str) -> bool:
            raise RuntimeError("server down")

        with self.assertRaisesRegex(RuntimeError, "server down"):
            generate_engine_id("x", "dai", exists)

    def test_module_examples_hold(self) -> None:
        result = doctest.testmod(generator, verbose=False)
        self.assertGreater(result.attempted, 0)
        self.assertEqual(result.failed, 0)


if __name__ == "__main__":
    unittest.main()
