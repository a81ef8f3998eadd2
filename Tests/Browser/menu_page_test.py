"""The browser page (GET /) and CORS, driven in headless Chromium with Selenium.

Run by scripts/browser-test, which installs Chromium, chromedriver and Selenium and passes:
  MENU_SERVER   the built menu-server binary
  MENU_BENCH    the built menu-bench binary (writes the large generated menu)
  OUT           the directory for screenshots and logs

Every wait is for a DOM condition (explicit waits, bounded); nothing asserts a time. Each check
compares what the page shows with what the API answers for the page's own session.
"""

import calendar
import http.server
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.environ.get("OUT", os.path.join(ROOT, ".build", "browser-test"))
WAIT = 30  # seconds any one DOM condition may take to hold (a loaded machine)


class Server:
    """A menu-server process on a free port of 127.0.0.1."""

    def __init__(self, config, *flags):
        self.process = subprocess.Popen(
            [os.environ["MENU_SERVER"], "--port", "0", "--config", config, *flags],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for line in self.process.stdout:
            match = re.match(r"menu-server listening on (http://\S+)", line)
            if match:
                self.url = match.group(1)
                return
        raise RuntimeError(f"menu-server did not start with {config}")

    def call(self, method, path, session=None, body=None, headers=None):
        """(status, headers, JSON body or None) of one request."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=dict(headers or {}))
        if session:
            request.add_header("X-Session-Id", session)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                text = response.read()
                return response.status, response.headers, json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            text = error.read()
            return error.code, error.headers, json.loads(text) if text else None

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def browser(language="en-US"):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,800",
                     "--disable-gpu", f"--lang={language}"]:
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"intl.accept_languages": language})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def browser_in_zone(zone):
    """A browser whose clock reads in the IANA time zone `zone` (its TZ when it starts)."""
    previous = os.environ.get("TZ")
    os.environ["TZ"] = zone
    try:
        return browser()
    finally:
        if previous is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = previous


def press(driver, key, on):
    # A key for the row `on` once it has the focus, sent to whatever is focused when it goes out:
    # the page may replace the row's element (a write's rows coming back) between a lookup of
    # the active element and a send_keys to it, which then fails as stale.
    wait(driver, lambda d: d.switch_to.active_element.get_attribute("data-id") == on, f"{on} focused for {key!r}")
    ActionChains(driver).send_keys(key).perform()


def wait(driver, condition, what):
    # A row element may be replaced between finding it and reading it: try again at the next poll.
    try:
        return WebDriverWait(driver, WAIT, poll_frequency=0.05, ignored_exceptions=(StaleElementReferenceException,)).until(
            lambda d: condition(d))
    except TimeoutException:
        driver.save_screenshot(os.path.join(OUT, "failure.png"))
        seen = driver.execute_script(
            "const s = window.menuPage.state; return JSON.stringify({revision: s.revision, count: s.count, etag: s.etag, "
            "epoch: s.epoch, session: s.sessionId, status: document.getElementById('status').textContent, "
            "rows: [...document.querySelectorAll('#spacer > .row')].map(e => e.dataset.key).slice(0, 30)})")
        raise AssertionError(f"timed out waiting for {what}; the page: {seen}")


def dom_rows(driver):
    """The data rows in the DOM, in index order, as the page shows them."""
    return driver.execute_script("""
        return [...document.querySelectorAll('#spacer > .row')].map(e => ({
            index: Number(e.dataset.index), id: e.dataset.id || null,
            level: Number(e.getAttribute('aria-level')), rowindex: Number(e.getAttribute('aria-rowindex')),
            posinset: Number(e.getAttribute('aria-posinset')), setsize: Number(e.getAttribute('aria-setsize')),
            expanded: e.getAttribute('aria-expanded'),
            checked: e.querySelector('.check') ? e.querySelector('.check').getAttribute('aria-checked') : null,
            title: e.querySelector('.title') ? e.querySelector('.title').textContent : null,
            top: e.getBoundingClientRect().top,
        })).sort((a, b) => a.index - b.index);""")


def metric(server, name):
    """The server's figure `name` from GET /metrics (0 when it is not there)."""
    with urllib.request.urlopen(server.url + "/metrics", timeout=30) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[-1])
    return 0


def session_of(driver):
    return driver.execute_script("return (JSON.parse(localStorage.getItem('menu-server.session')) || {}).sessionId || null")


def loaded(driver):
    """Every row in the DOM has its data (none is a placeholder) and there is at least one."""
    rows = dom_rows(driver)
    return rows and all(row["id"] for row in rows) and rows


def expect_dom_matches_api(driver, server):
    """Every row in the DOM is the API's row at its index for the page's session."""
    rows = wait(driver, loaded, "the rows in view to load")
    session = session_of(driver)
    first, last = rows[0]["index"], rows[-1]["index"]
    # The page's titles are in the language the browser asked for (its own Accept-Language); the
    # page keeps the answer's Content-Language as the document's lang: ask the API in that one.
    language = driver.execute_script("return document.documentElement.lang")
    status, _, page = server.call("GET", f"/rows?offset={first}&limit={last - first + 1}", session,
                                  headers={"Accept-Language": language})
    assert status == 200, page
    api = {row["index"]: row for row in page["rows"]}
    for row in rows:
        want = api[row["index"]]
        assert row["id"] == want["id"] and row["title"] == want["title"], (row, want)
        assert row["level"] == want["level"] == want["depth"] + 1 and row["rowindex"] == want["index"] + 2, (row, want)
        assert (row["posinset"], row["setsize"]) == (want["posInSet"], want["setSize"]), (row, want)
        assert row["expanded"] == (str(want["isExpanded"]).lower() if want["isGroup"] else None), (row, want)
        checked = {"all": "true", "some": "mixed", "none": "false"}[want["selection"]] if want["isGroup"] \
            else str(want["selected"]).lower()
        assert row["checked"] == checked, (row, want)
    count = int(driver.find_element(By.ID, "grid").get_attribute("aria-rowcount")) - 1
    assert count == page["count"], (count, page["count"])
    return rows, page


def open_fresh_page(driver, server, fragment=""):
    """The page with nothing of an earlier test's in localStorage, checked against the API (its
    rows and the page's answer, as expect_dom_matches_api returns them). `#debug` shows the
    developer's tools (the reveal-by-id box)."""
    driver.get(server.url + "/")
    driver.execute_script("localStorage.clear()")
    driver.get(server.url + "/" + fragment)
    driver.refresh()  # a new fragment alone loads nothing
    return expect_dom_matches_api(driver, server)


def row_element(driver, node_id):
    return driver.find_element(By.CSS_SELECTOR, f'#spacer > .row[data-id="{node_id}"]')


def expanded_flag(driver, node_id):
    return driver.execute_script(
        "const e = document.querySelector(`#spacer > .row[data-id='${arguments[0]}']`); return e ? e.getAttribute('aria-expanded') : null",
        node_id)


def supports(server, method, path, body):
    status, _, answer = server.call(method, path, body=body)
    return status not in (404, 405) or (answer or {}).get("error", {}).get("code") not in ("not_found", "method_not_allowed")


def expect_no_session_id_in_a_url(driver, session):
    """Every URL the page fetched (Resource Timing) and its own address are free of the session id:
    the id is a bearer credential and travels in X-Session-Id only."""
    urls = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)") + [driver.current_url]
    assert any("/rows" in url for url in urls), urls  # the page's requests are there to search
    assert not [url for url in urls if session in url], [url for url in urls if session in url]


def path_shown(driver):
    """The groups the path above the grid names, as read."""
    return [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#path .step")]


def first_row_in_view(driver):
    """The index of the first row whose top is in the viewport."""
    return driver.execute_script(
        "const top = document.getElementById('viewport').getBoundingClientRect().top;"
        "const rows = [...document.querySelectorAll('#spacer > .row')].filter(e => e.getBoundingClientRect().top >= top - 1);"
        "return rows.length ? Math.min(...rows.map(e => Number(e.dataset.index))) : null")


def expect_path_matches_api(driver, server):
    """The path above the grid names the groups enclosing the first row in view, as the API's
    ancestors=true says for the page's session and language."""
    language = driver.execute_script("return document.documentElement.lang")
    def matches(d):
        first = first_row_in_view(d)
        if first is None:
            return False
        _, _, page = server.call("GET", f"/rows?offset={first}&limit=1&ancestors=true", session_of(d),
                                 headers={"Accept-Language": language})
        shown = path_shown(d)
        return (shown,) if shown == [row["title"] for row in page["ancestors"]] else None
    return wait(driver, matches, "the path above the grid to name the first row's groups")[0]


def test_sichuan(driver, server):
    rows, page = open_fresh_page(driver, server, "#debug")
    assert page["count"] == 30 and session_of(driver) is None  # the default expansion, no session yet
    # Chromium runs with --lang=en-US and sends it: the menu's English titles, and the document says so.
    assert driver.execute_script("return document.documentElement.lang") == "en"
    assert rows[0]["title"] == "Main Courses", rows[0]
    # The page is named by the menu (GET /menu), and its languages are the menu's.
    _, _, summary = server.call("GET", "/menu", headers={"Accept-Language": "en"})
    wait(driver, lambda d: d.title == summary["title"] == "Sichuan Restaurant", "the menu's title as the page's")
    options = [o.get_attribute("value") for o in driver.find_elements(By.CSS_SELECTOR, "#language option")]
    assert options == [""] + summary["locales"], options
    assert driver.find_element(By.CSS_SELECTOR, '[data-id="mapo-tofu"] .pepper') is not None
    assert "¥" in row_element(driver, "mapo-tofu").find_element(By.CSS_SELECTOR, ".price").text or \
        "CN" in row_element(driver, "mapo-tofu").find_element(By.CSS_SELECTOR, ".price").text

    # Close a group with the mouse: the splice removes its rows, a session is created and kept.
    row_element(driver, "breakfast").find_element(By.CSS_SELECTOR, ".twisty").click()
    wait(driver, lambda d: expanded_flag(d, "breakfast") == "false", "breakfast to collapse")
    wait(driver, lambda d: session_of(d) is not None, "the session id in localStorage")
    wait(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, '[data-id="dan-dan-noodles"]'), "breakfast's rows to go")
    _, page = expect_dom_matches_api(driver, server)
    assert page["count"] == 25, page["count"]

    # Keyboard: focus beer, collapse it with ArrowLeft, open it again with ArrowRight, Enter toggles.
    row_element(driver, "beer").click()
    press(driver, Keys.ARROW_LEFT, on="beer")
    wait(driver, lambda d: expanded_flag(d, "beer") == "false", "ArrowLeft to collapse beer")
    press(driver, Keys.ARROW_RIGHT, on="beer")
    wait(driver, lambda d: expanded_flag(d, "beer") == "true", "ArrowRight to expand beer")
    press(driver, Keys.ARROW_DOWN, on="beer")
    wait(driver, lambda d: d.switch_to.active_element.get_attribute("data-id") == "snow-beer", "ArrowDown to move to snow-beer")
    press(driver, Keys.ARROW_LEFT, on="snow-beer")  # a leaf: to its parent
    wait(driver, lambda d: d.switch_to.active_element.get_attribute("data-id") == "beer", "ArrowLeft on a leaf to its group")
    press(driver, Keys.ENTER, on="beer")
    wait(driver, lambda d: expanded_flag(d, "beer") == "false", "Enter to collapse beer")
    expect_dom_matches_api(driver, server)

    # Reveal a hidden row: its group opens and it gets the focus.
    driver.find_element(By.ID, "reveal-id").send_keys("tsingtao-beer", Keys.ENTER)
    wait(driver, lambda d: d.switch_to.active_element.get_attribute("data-id") == "tsingtao-beer", "tsingtao-beer revealed")
    assert expanded_flag(driver, "beer") == "true"
    expect_dom_matches_api(driver, server)

    # The session survives a reload (localStorage).
    session = session_of(driver)
    driver.refresh()
    expect_dom_matches_api(driver, server)
    assert session_of(driver) == session and expanded_flag(driver, "breakfast") == "false"

    # Another tab of the same session writes: the page hears it by itself (an event stream of
    # GET /changes, read through fetch), with no call made here; a focus catches up through
    # ETag + /changes too.
    wait(driver, lambda d: metric(server, "menu_event_streams_open") >= 1, "the page to follow an event stream")
    status, _, _ = server.call("POST", "/groups/drinks/toggle", session)
    assert status == 200
    wait(driver, lambda d: expanded_flag(d, "drinks") == "false", "the other tab's collapse of drinks, live")
    expect_dom_matches_api(driver, server)
    server.call("POST", "/groups/drinks/toggle", session)
    driver.execute_script("window.menuPage.sync()")
    wait(driver, lambda d: expanded_flag(d, "drinks") == "true", "the other tab's expand of drinks")

    # Expand all and collapse all (PUT /expansion; the page disables both on a server without it).
    assert supports(server, "PUT", "/expansion", {"all": "default"})
    driver.find_element(By.ID, "collapse-all").click()
    wait(driver, lambda d: d.find_element(By.ID, "grid").get_attribute("aria-rowcount") == "4", "collapse all (3 rows)")
    expect_dom_matches_api(driver, server)
    driver.find_element(By.ID, "expand-all").click()
    wait(driver, lambda d: d.find_element(By.ID, "grid").get_attribute("aria-rowcount") == "31", "expand all (30 rows)")
    expect_dom_matches_api(driver, server)
    row_element(driver, "breakfast").find_element(By.CSS_SELECTOR, ".twisty").click()
    wait(driver, lambda d: expanded_flag(d, "breakfast") == "false", "breakfast to collapse again")

    # Portable state: with GET /session, the expansion is kept by id in localStorage, and a
    # lost session (expired, or a restarted server) comes back in a new one with the same groups.
    assert server.call("GET", "/session", session_of(driver))[0] == 200
    # The page saves the expansion 250 ms after a change, so an earlier one (breakfast and drinks
    # both collapsed, from the other tab's write) may still be there: wait for this one.
    wait(driver, lambda d: d.execute_script(
        "const s = JSON.parse(localStorage.getItem('menu-server.session')); return !!s.expansion && "
        "s.expansion.collapsed.includes('breakfast') && !s.expansion.collapsed.includes('drinks')"),
        "the portable expansion in localStorage")
    lost = session_of(driver)
    expect_no_session_id_in_a_url(driver, lost)
    assert server.call("DELETE", "/session", lost)[0] == 204
    driver.refresh()
    wait(driver, lambda d: session_of(d) not in (None, lost), "a new session restored from localStorage")
    rows, _ = expect_dom_matches_api(driver, server)
    assert expanded_flag(driver, "breakfast") == "false" and expanded_flag(driver, "drinks") == "true"
    print("browser-test: portable state restored into a new session")
    # Reset ends the session (DELETE /session with the header) and starts from the default.
    restored = session_of(driver)
    driver.find_element(By.ID, "new-session").click()
    wait(driver, lambda d: server.call("GET", "/count", restored)[0] == 404, "Reset to delete the session")
    expect_no_session_id_in_a_url(driver, restored)

    driver.save_screenshot(os.path.join(OUT, "sichuan.png"))


def test_settings(driver, server):
    open_fresh_page(driver, server)
    row_element(driver, "general").find_element(By.CSS_SELECTOR, ".twisty").click()
    wait(driver, lambda d: expanded_flag(d, "general") == "true", "general to expand")
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-id="software-update"] .chip.badge'), "the badge chip")
    expect_dom_matches_api(driver, server)
    driver.save_screenshot(os.path.join(OUT, "settings.png"))


def test_reload_reaches_an_open_page(driver):
    """A menu reload (SIGHUP) that adds a row shows in an open page by itself: the page's event
    stream says reload, and the page reads its rows again, with no call made here."""
    config = os.path.join(OUT, "settings-reload.json")
    with open(os.path.join(ROOT, "Config", "settings.json")) as source:
        document = json.load(source)
    with open(config, "w") as target:
        json.dump(document, target)
    server = Server(config)
    try:
        open_fresh_page(driver, server)
        wait(driver, lambda d: metric(server, "menu_event_streams_open") >= 1, "the page to follow an event stream")
        assert not driver.find_elements(By.CSS_SELECTOR, '[data-id="added-setting"]')
        document["items"].append({"id": "added-setting", "title": {"en": "Added setting", "de": "Neue Einstellung"}})
        with open(config, "w") as target:
            json.dump(document, target)
        server.process.send_signal(signal.SIGHUP)
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-id="added-setting"]'), "the added row, live")
        expect_dom_matches_api(driver, server)
        print("browser-test: a reload that adds a row showed in the open page by itself")

        # With a session, the reload is an entry of the session's feed: the page applies its
        # splices and refetches only the rows it names (a renamed title, a new row), keeping the rest.
        row_element(driver, "general").find_element(By.CSS_SELECTOR, ".twisty").click()
        wait(driver, lambda d: expanded_flag(d, "general") == "true", "general to expand")
        wait(driver, lambda d: session_of(d) is not None, "the session id in localStorage")
        document["items"][0]["title"] = {"en": "Account (renamed)", "de": "Konto (umbenannt)"}
        document["items"].insert(1, {"id": "added-again", "title": {"en": "Added again", "de": "Wieder neu"}})
        with open(config, "w") as target:
            json.dump(document, target)
        server.process.send_signal(signal.SIGHUP)
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-id="added-again"]'), "the second added row, live")
        wait(driver, lambda d: "(" in row_element(d, "account").text, "the renamed title, live")
        assert driver.execute_script("return window.menuPage.state.reloadsSpliced") == 1
        assert expanded_flag(driver, "general") == "true"
        expect_dom_matches_api(driver, server)
        print("browser-test: a reload with a session reached the page as the splices of its feed entry")

        # Two tabs of the session, and a reload: each shows the new row, the one in front live,
        # the other once it is shown again, both by the feed entry's splices.
        first = driver.current_window_handle
        driver.switch_to.new_window("tab")
        driver.get(server.url + "/")
        expect_dom_matches_api(driver, server)
        second = driver.current_window_handle
        assert expanded_flag(driver, "general") == "true"  # the same session, from localStorage
        wait(driver, lambda d: metric(server, "menu_event_streams_open") >= 1, "the second tab to follow")
        document["items"].insert(2, {"id": "added-third", "title": {"en": "Added third", "de": "Dritte"}})
        with open(config, "w") as target:
            json.dump(document, target)
        server.process.send_signal(signal.SIGHUP)
        for handle, spliced in ((second, 1), (first, 2)):
            driver.switch_to.window(handle)
            wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-id="added-third"]'), "the third row in each tab")
            assert driver.execute_script("return window.menuPage.state.reloadsSpliced") == spliced
            expect_dom_matches_api(driver, server)
        driver.switch_to.window(second)
        driver.close()
        driver.switch_to.window(first)
        print("browser-test: two tabs of one session both showed a reload by its splices")
    finally:
        server.stop()


def test_availability_reaches_an_open_page():
    """A dish sold out through the admin API shows in an open page by itself, struck through with
    its state, its end in the reader's time (the time alone when that is today, with the day
    otherwise) and the reason; the page refetches only the rows the feed names; clearing it takes
    the mark away again. The browser reads its clock in a zone where it is about midday, so an
    end an hour away is today whatever the time of the run (at 23:00 UTC it would be tomorrow)."""
    token = "browser-admin-token-0123456789abcdef"
    tokens = os.path.join(OUT, "admin-tokens")
    with open(tokens, "w") as target:
        target.write(token + "\n")
    with socket.socket() as probe:  # a free port for the admin listener (its line goes to stderr)
        probe.bind(("127.0.0.1", 0))
        admin_port = probe.getsockname()[1]
    server = Server(os.path.join(ROOT, "Config", "menu.json"),
                    "--admin-listen", f"127.0.0.1:{admin_port}", "--admin-token-file", tokens)
    server.admin_url = f"http://127.0.0.1:{admin_port}"

    def admin(changes):
        request = urllib.request.Request(
            server.admin_url + "/admin/availability", data=json.dumps({"changes": changes}).encode(), method="PUT",
            headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    east = 12 - time.gmtime().tm_hour  # hours east of UTC where it is now 12:xx
    driver = browser_in_zone(f"Etc/GMT{-east:+d}")  # (Etc/GMT-5 is UTC+05:00)

    def reader_time(seconds):  # the struct_time the reader's clock shows at `seconds` since 1970
        return time.gmtime(seconds + east * 3600)

    try:
        open_fresh_page(driver, server)
        wait(driver, lambda d: metric(server, "menu_event_streams_open") >= 1, "the page to follow an event stream")
        dish = next(row for row in dom_rows(driver) if row["id"] and row["expanded"] is None)["id"]
        assert not row_element(driver, dish).get_attribute("class").count("unavailable")
        end = int(time.time()) // 60 * 60 + 3600
        until = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(end))
        assert admin([{"id": dish, "state": "sold_out", "until": until, "reason": "the wok is busy"}])["revision"] == 1
        wait(driver, lambda d: "unavailable" in row_element(d, dish).get_attribute("class"), "the sold-out mark, live")
        text = row_element(driver, dish).text
        back = reader_time(end)
        expected = f"back at {back.tm_hour % 12 or 12}:{back.tm_min:02d}"
        assert "Sold out" in text and expected in text and "the wok is busy" in text, f"{text!r}, expected {expected!r}"
        later = end + 2 * 86400  # another day: the day is shown, and no "at"
        admin([{"id": dish, "state": "sold_out", "until": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(later))}])
        day = time.strftime("%a", reader_time(later))
        wait(driver, lambda d: day in row_element(d, dish).text, f"the end two days on, on {day}")
        text = row_element(driver, dish).text
        assert f"back {day}" in text and "back at" not in text, text
        title = row_element(driver, dish).find_element(By.CSS_SELECTOR, ".title")
        assert "line-through" in title.value_of_css_property("text-decoration"), title.value_of_css_property("text-decoration")
        assert driver.execute_script("return window.menuPage.state.availabilityUpdates") >= 1
        driver.save_screenshot(os.path.join(OUT, "availability.png"))
        admin([{"id": dish, "state": "available"}])
        wait(driver, lambda d: "unavailable" not in row_element(d, dish).get_attribute("class"), "the mark gone, live")
        expect_dom_matches_api(driver, server)
        print(f"browser-test: {dish} sold out and back showed in the open page by itself ({expected} on a clock at UTC{east:+d})")
    finally:
        driver.quit()
        server.stop()


def test_opening_hours_on_the_page():
    """A group outside its opening hours shows closed, struck through, with the time it opens in
    the reader's own zone: a browser in Asia/Kolkata (UTC+05:30) reads a UTC menu's opening a
    half hour off the hour; the dish under it shows the group's closing too."""
    opens = time.gmtime((int(time.time()) // 60 + 120) * 60)  # two hours from now, to the minute
    closes = time.gmtime(calendar.timegm(opens) + 3600)
    config = os.path.join(OUT, "hours.json")
    with open(config, "w") as target:
        json.dump({"timeZone": "UTC", "items": [
            {"id": "late", "title": "Late kitchen", "expanded": True,
             "hours": [{"from": time.strftime("%H:%M", opens), "to": time.strftime("%H:%M", closes)}],
             "items": [{"id": "noodles", "title": "Dan dan noodles"}]},
            {"id": "tea", "title": "Jasmine tea"}]}, target)
    server = Server(config)
    driver = browser_in_zone("Asia/Kolkata")
    try:
        open_fresh_page(driver, server)
        wait(driver, lambda d: "unavailable" in row_element(d, "noodles").get_attribute("class"), "the closed dish")
        kolkata = time.gmtime(calendar.timegm(opens) + 5 * 3600 + 1800)
        expected = f"{kolkata.tm_hour % 12 or 12}:{kolkata.tm_min:02d}"
        for node in ["late", "noodles"]:
            text = row_element(driver, node).text
            assert "Closed" in text and "opens" in text and expected in text, f"{node}: {text!r}, expected {expected}"
        title = row_element(driver, "noodles").find_element(By.CSS_SELECTOR, ".title")
        assert "line-through" in title.value_of_css_property("text-decoration")
        assert "unavailable" not in row_element(driver, "tea").get_attribute("class")
        driver.save_screenshot(os.path.join(OUT, "hours.png"))
        print(f"browser-test: a group closed until {time.strftime('%H:%M', opens)} UTC shows it opens at {expected} in Kolkata")
    finally:
        driver.quit()
        server.stop()


def test_large_menu_stays_virtualized(driver, server):
    _, page = open_fresh_page(driver, server)
    assert page["count"] > 10_000, page["count"]
    most = scroll_far(driver, server, page["count"])
    print(f"browser-test: {page['count']} rows, at most {most} in the DOM while scrolling")
    # Every group open, and the scroll height scaled (more rows than 200 000 px hold at 36 px).
    driver.get(server.url + "/#max-scroll-px=200000")
    driver.refresh()  # a new fragment alone loads nothing
    wait(driver, loaded, "the rows in view to load")
    driver.find_element(By.ID, "expand-all").click()
    wait(driver, lambda d: int(d.find_element(By.ID, "grid").get_attribute("aria-rowcount")) > 100_000, "expand all")
    _, page = expect_dom_matches_api(driver, server)
    height = driver.execute_script("return document.getElementById('spacer').offsetHeight")
    assert height == 200_000 and page["count"] * 36 > height, (height, page["count"])
    most = scroll_far(driver, server, page["count"])
    print(f"browser-test: all expanded, {page['count']} rows in {height} px of scrolling, at most {most} in the DOM")


def scroll_far(driver, server, count):
    """Scrolls to a quarter, half, the end and a tenth, then to the last row by keyboard, checking
    the rows in view against the API each time; returns the most rows the DOM held."""
    most = 0
    paths = []
    for fraction in [0.25, 0.5, 0.999, 0.1]:
        driver.execute_script(f"const v = document.getElementById('viewport'); v.scrollTop = (v.scrollHeight - v.clientHeight) * {fraction}")
        expected = int((count - 1) * fraction * 0.9)
        def near(d, fraction=fraction, expected=expected):
            rows = loaded(d)  # read once: a second read may catch a placeholder the first did not
            return bool(rows) and rows[0]["index"] >= expected - 200 and \
                abs(rows[0]["index"] - count * fraction) < count * 0.05 + 100
        wait(driver, near, f"rows near {fraction:.0%} to load")
        rows, _ = expect_dom_matches_api(driver, server)
        # Inside groups whose rows are far above (not held): asked with ancestors=true.
        paths.append(expect_path_matches_api(driver, server))
        most = max(most, len(driver.find_elements(By.CSS_SELECTOR, "#spacer > .row")))
    # 800 px of viewport at 36 px a row is about 20 rows, plus 8 of overscan each side.
    assert most <= 60, f"{most} rows in the DOM"
    assert any(paths), f"no view started inside a group: {paths}"
    print(f"browser-test: paths above the grid {[' › '.join(p) for p in paths]}")
    # Scrolled away from the focused row, the grid is still one Tab stop: a row in view.
    stops = driver.execute_script("return [...document.querySelectorAll('#spacer > .row')].filter(e => e.tabIndex === 0).length")
    assert stops == 1, f"{stops} rows in the tab order"
    # A row in the middle of the view, clicked beside its title (a click on the title toggles).
    driver.execute_script(
        "const v = document.getElementById('viewport').getBoundingClientRect();"
        "return document.elementFromPoint(v.left + v.width * 0.8, v.top + v.height / 2).closest('.row')").click()
    wait(driver, lambda d: d.switch_to.active_element.get_attribute("data-id") is not None, "the clicked row focused")
    ActionChains(driver).send_keys(Keys.END).perform()
    wait(driver, lambda d: d.switch_to.active_element.get_attribute("aria-rowindex") == str(count + 1), "End to focus the last row")
    expect_dom_matches_api(driver, server)
    return most


CROSS_ORIGIN_PAGE = """<!doctype html><meta charset="utf-8"><title>other origin</title><pre id="out">running</pre>
<script>
(async () => {
  const api = new URLSearchParams(location.search).get("api");
  const out = {};
  try {
    const toggled = await fetch(api + "/groups/drinks/toggle", { method: "POST", headers: { "Content-Type": "application/json" } });
    out.toggle = toggled.status;
    out.session = toggled.headers.get("X-Session-Id");
    const rows = await fetch(api + "/rows?limit=50", { headers: { "X-Session-Id": out.session } });
    out.etag = rows.headers.get("ETag");
    out.count = (await rows.json()).count;
    const again = await fetch(api + "/rows?limit=50", { headers: { "X-Session-Id": out.session, "If-None-Match": out.etag } });
    out.revalidated = again.status;
  } catch (error) {
    out.error = String(error);
  }
  document.getElementById("out").textContent = JSON.stringify(out);
})();
</script>"""


def test_cross_origin(driver, menu):
    """A page on a second local server uses the API of a menu-server that names its origin."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = CROSS_ORIGIN_PAGE.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *arguments):
            pass

    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    port = web.server_address[1]
    api = Server(menu, "--cors-origin", f"http://127.0.0.1:{port}")
    try:
        def result(origin_host):
            driver.get(f"http://{origin_host}:{port}/?api={api.url}")
            text = wait(driver, lambda d: d.find_element(By.ID, "out").text != "running" and d.find_element(By.ID, "out").text,
                        "the cross-origin page's calls")
            return json.loads(text)

        allowed = result("127.0.0.1")
        assert allowed.get("toggle") == 200 and allowed.get("session"), allowed
        assert allowed.get("count") == 17 and allowed.get("etag", "").startswith('"'), allowed
        assert allowed.get("revalidated") == 304, allowed
        status, _, count = api.call("GET", "/count", allowed["session"])
        assert status == 200 and count["count"] == 17, count
        # http://localhost:PORT is another origin, which the server does not name: the browser refuses.
        refused = result("localhost")
        assert "error" in refused and "toggle" not in refused, refused
        print(f"browser-test: cross-origin page {allowed}; from an origin not named: {refused['error']}")
    finally:
        api.stop()
        web.shutdown()


def main():
    os.makedirs(OUT, exist_ok=True)
    large = os.path.join(OUT, "medium.json")
    if not os.path.exists(large):
        subprocess.run([os.environ["MENU_BENCH"], "--write-menu", "medium", large], check=True, stdout=subprocess.DEVNULL)
    menu = os.path.join(ROOT, "Config", "menu.json")
    servers = {"sichuan": Server(menu), "settings": Server(os.path.join(ROOT, "Config", "settings.json")), "large": Server(large)}
    driver = browser()
    failed = False
    import search_page_test  # here, not at the top: it imports this file's helpers
    import phone_page_test
    try:
        for name, test in [("sichuan", lambda: test_sichuan(driver, servers["sichuan"])),
                           ("search", lambda: search_page_test.test_search(driver, servers["sichuan"])),
                           ("language", lambda: search_page_test.test_language(servers["sichuan"])),
                           ("phone", lambda: phone_page_test.test_phone(driver, servers["sichuan"])),
                           ("long names", lambda: phone_page_test.test_long_names_and_a_lost_server(driver)),
                           ("keyboard", lambda: phone_page_test.test_keyboard_alone(driver, servers["sichuan"])),
                           ("selection", lambda: phone_page_test.test_selection(driver, servers["sichuan"])),
                           ("settings", lambda: test_settings(driver, servers["settings"])),
                           ("large", lambda: test_large_menu_stays_virtualized(driver, servers["large"])),
                           ("reload", lambda: test_reload_reaches_an_open_page(driver)),
                           ("availability", test_availability_reaches_an_open_page),
                           ("hours", test_opening_hours_on_the_page),
                           ("cross-origin", lambda: test_cross_origin(driver, menu))]:
            try:
                test()
                print(f"browser-test: {name} passed")
            except Exception as error:  # report every test, then fail
                failed = True
                print(f"browser-test: {name} FAILED: {error!r}", file=sys.stderr)
                traceback.print_exc()
                for entry in driver.get_log("browser"):
                    print("  console:", entry["message"], file=sys.stderr)
    finally:
        driver.quit()
        for server in servers.values():
            server.stop()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
