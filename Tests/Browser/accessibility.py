"""axe-core (the copy PyPI's axe-playwright-python bundles, injected through Selenium; Playwright
itself is not used) run on the page as it stands: every violation of every rule axe runs by
default (WCAG 2.x A and AA, best practices), with the elements it names."""
import importlib.util
import os

_spec = importlib.util.find_spec("axe_playwright_python")
AXE_SOURCE = open(os.path.join(os.path.dirname(_spec.origin), "axe.min.js"), encoding="utf-8").read()


def axe_violations(driver):
    """The violations axe finds on the page now: [(rule id, impact, help, [target selectors])]."""
    if not driver.execute_script("return typeof window.axe === 'object'"):
        driver.execute_script(AXE_SOURCE)
    driver.set_script_timeout(60)
    result = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then((r) => done(r.violations.map((v) => "
        "[v.id, v.impact, v.help, v.nodes.slice(0, 5).map((n) => n.target.join(' '))]))).catch((e) => done(String(e)));")
    if isinstance(result, str):
        raise AssertionError(f"axe did not run: {result}")
    return result


def axe_version(driver):
    if not driver.execute_script("return typeof window.axe === 'object'"):
        driver.execute_script(AXE_SOURCE)
    return driver.execute_script("return axe.version")
