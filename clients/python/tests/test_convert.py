"""The duration and quantity convertors, including their documented examples."""

import datetime
import doctest
import unittest

from tests import support  # noqa: F401  (puts the package on the path)
from ai_engine_manager.convert import duration_convertor, quantity_convertor
from ai_engine_manager.convert.duration_convertor import duration_to_seconds, parse_duration, seconds_to_duration
from ai_engine_manager.convert.quantity_convertor import number_str_to_quantity, parse_quantity, quantity_to_number_str


class DurationConvertorTest(unittest.TestCase):
    def test_units_become_seconds(self) -> None:
        cases = {"0s": "0s", "45s": "45s", "1m": "60s", "90m": "5400s", "2h": "7200s", "1d": "86400s", "7d": "604800s",
                 "01h": "3600s"}
        for given, wanted in cases.items():
            with self.subTest(given=given):
                self.assertEqual(duration_to_seconds(given), wanted)

    def test_ints_and_timedeltas_are_seconds(self) -> None:
        self.assertEqual(duration_to_seconds(90), "90s")
        self.assertEqual(duration_to_seconds(0), "0s")
        self.assertEqual(duration_to_seconds(datetime.timedelta(hours=2)), "7200s")
        self.assertEqual(duration_to_seconds(datetime.timedelta(days=1, seconds=1)), "86401s")

    def test_rejects_what_is_not_one_whole_unit(self) -> None:
        for bad in ["", "1", "1.5h", "1h30m", "2H", " 1h", "1h ", "-1h", "1w", "h", "1 h", "1hh", "1e3s"]:
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                duration_to_seconds(bad)
        for bad in [-1, True, None, 1.5, datetime.timedelta(milliseconds=1500), datetime.timedelta(seconds=-1)]:
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                parse_duration(bad)  # type: ignore[arg-type]

    def test_largest_even_unit_on_the_way_back(self) -> None:
        cases = {"0s": "0s", "1s": "1s", "59s": "59s", "60s": "1m", "61s": "61s", "3600s": "1h", "5400s": "90m",
                 "86400s": "1d", "90000s": "25h", "172800s": "2d", "3601s": "3601s", "604800s": "7d"}
        for given, wanted in cases.items():
            with self.subTest(given=given):
                self.assertEqual(seconds_to_duration(given), wanted)

    def test_fractions_of_a_second_are_dropped(self) -> None:
        self.assertEqual(seconds_to_duration("12.5s"), "12s")
        self.assertEqual(seconds_to_duration("3600.000000001s"), "1h")
        self.assertEqual(seconds_to_duration("0.25s"), "0s")
        self.assertEqual(seconds_to_duration(7200), "2h")
        self.assertEqual(seconds_to_duration(60.9), "1m")

    def test_rejects_malformed_api_durations(self) -> None:
        for bad in ["", "3600", "1h", "-5s", "s", "1.s", "abc", "1.0000000001s"]:
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                seconds_to_duration(bad)
        for bad in [-1, True]:
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                seconds_to_duration(bad)

    def test_round_trip(self) -> None:
        for value in ["1s", "59m", "23h", "2d", "90m", "25h", "1000d"]:
            with self.subTest(value=value):
                self.assertEqual(seconds_to_duration(duration_to_seconds(value)), value)


class QuantityConvertorTest(unittest.TestCase):
    def test_units_become_bytes(self) -> None:
        cases = {"0": "0", "1": "1", "1k": "1000", "1Ki": "1024", "1M": "1000000", "1Mi": "1048576",
                 "16Gi": "17179869184", "100G": "100000000000", "2T": "2000000000000", "1Ti": "1099511627776",
                 "1P": "1000000000000000", "1Pi": "1125899906842624", "0Gi": "0", "007Mi": "7340032"}
        for given, wanted in cases.items():
            with self.subTest(given=given):
                self.assertEqual(quantity_to_number_str(given), wanted)

    def test_ints_are_bytes(self) -> None:
        self.assertEqual(quantity_to_number_str(2048), "2048")
        self.assertEqual(quantity_to_number_str(0), "0")
        self.assertEqual(quantity_to_number_str(2**63 - 1), str(2**63 - 1))

    def test_rejects_unknown_units_and_fractions(self) -> None:
        for bad in ["", "1.5Gi", "1K", "1Ei", "1E", "1GB", "1gi", "Gi", "-1", "1 Gi", " 1", "1Gi ", "1e9", "0x10"]:
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                quantity_to_number_str(bad)
        for bad in [-1, True, None, 1.0]:
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                parse_quantity(bad)  # type: ignore[arg-type]

    def test_first_unit_that_divides_on_the_way_back(self) -> None:
        cases = {"0": "0", "1": "1", "999": "999", "1000": "1k", "1024": "1Ki", "1536": "1536", "2048000": "2000Ki",
                 "4096000": "4000Ki", "1000000": "1M", "1048576": "1Mi", "17179869184": "16Gi",
                 "1000000000": "1G", "1073741824": "1Gi", "1099511627776": "1Ti", "1125899906842624": "1Pi",
                 "1000000000000000": "1P", "2000000000000000000": "2000P", "3000": "3k"}
        for given, wanted in cases.items():
            with self.subTest(given=given):
                self.assertEqual(number_str_to_quantity(given), wanted)
        self.assertEqual(number_str_to_quantity(1024**3 * 3), "3Gi")

    def test_rejects_malformed_numbers(self) -> None:
        for bad in ["", "abc", "1Gi", "-1", "1.0", -5, True]:
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                number_str_to_quantity(bad)  # type: ignore[arg-type]

    def test_round_trip(self) -> None:
        for value in ["1k", "16Gi", "100G", "3Ti", "1536", "0", "7Mi"]:
            with self.subTest(value=value):
                self.assertEqual(number_str_to_quantity(quantity_to_number_str(value)), value)


class DocumentedExamplesTest(unittest.TestCase):
    def test_module_examples_hold(self) -> None:
        for module in (duration_convertor, quantity_convertor):
            with self.subTest(module=module.__name__):
                result = doctest.testmod(module, verbose=False)
                self.assertGreater(result.attempted, 0)
                self.assertEqual(result.failed, 0)


if __name__ == "__main__":
    unittest.main()
