"""Headless Chromium for the tests that look at a page as a reader does (the leaderboard, the report):
a selenium session kept off the network, the checks of a page's geometry, and the screenshots the
tests take, kept as artefacts of the test run in ``test-artifacts/screenshots/`` (``LMBIAS_TEST_ARTIFACTS``
names another folder)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

import pytest

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
ARTIFACTS = Path(os.environ.get("LMBIAS_TEST_ARTIFACTS") or Path(__file__).resolve().parents[1] / "test-artifacts")


def browser_missing() -> str:
    """Why the browser tests cannot run here ("" when they can)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not Path(path).exists()]
    return f"{' and '.join(missing)} not installed (`make test` installs Debian's chromium and chromium-driver)" if missing else ""


browser = pytest.mark.skipif(bool(browser_missing()), reason=browser_missing() or "browser available")


@contextlib.contextmanager
def chromium(width: int = 1400, height: int = 1000):
    """One headless Chromium session (flags that keep it off the network), the window ``width`` x ``height``."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--hide-scrollbars",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--window-size={width},{height}"):
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="lmbias-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def set_viewport(driver, width: int, height: int) -> None:
    """Make the page's viewport (not the window) ``width`` x ``height`` CSS pixels."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})


def screenshot(driver, name: str) -> Path:
    """Save what the viewport shows as ``ARTIFACTS/screenshots/NAME.png`` and return the path."""
    path = ARTIFACTS / "screenshots" / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(path)), path
    return path


def page_overflow(driver) -> int:
    """How many CSS pixels the page is wider than its viewport (0: no horizontal scrolling of the page)."""
    return driver.execute_script("return Math.max(0, document.documentElement.scrollWidth - "
                                 "document.documentElement.clientWidth)")


def overlapping_headers(driver, selector: str) -> list:
    """Header cells (``selector``) whose text spills out of their box or whose boxes overlap a neighbour's in
    the same row: ``[(text, why), ...]``."""
    return driver.execute_script("""
        var found = [], cells = Array.from(document.querySelectorAll(arguments[0]));
        cells.forEach(function (cell) {
          if (cell.scrollWidth > cell.clientWidth + 1) found.push([cell.innerText, "text wider than its box"]);
        });
        cells.forEach(function (a, i) {
          var ra = a.getBoundingClientRect();
          cells.slice(i + 1).forEach(function (b) {
            var rb = b.getBoundingClientRect();
            var sameRow = a.parentElement === b.parentElement;
            if (sameRow && ra.left < rb.right - 0.5 && rb.left < ra.right - 0.5 && ra.top < rb.bottom - 0.5 && rb.top < ra.bottom - 0.5)
              found.push([a.innerText + " / " + b.innerText, "boxes overlap"]);
          });
        });
        return found;""", selector)
