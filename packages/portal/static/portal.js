// pic2video portal: small progressive enhancements over server-rendered pages. No framework, no
// build step, nothing fetched from elsewhere (the CSP allows only this origin).
"use strict"
;(function() {
  // A page that answered a form (the new key's secret) becomes a plain GET entry: reloading it
  // asks the server again instead of resubmitting the form.
  if (document.querySelector("[data-testid=new-key-secret]") && history.replaceState) {
    history.replaceState(null, "", location.pathname)
  }

  // Copy buttons
  document.addEventListener("click", function(event) {
    var button = event.target.closest("[data-copy]")
    if (!button) return
    var source = document.getElementById(button.getAttribute("data-copy"))
    if (!source) return
    var text = source.textContent
    var done = function() {
      button.textContent = "Copied"
      setTimeout(function() { button.textContent = "Copy key" }, 2000)
    }
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(done, function() { selectText(source); })
    } else selectText(source)
  })
  function selectText(node) {
    var range = document.createRange()
    range.selectNodeContents(node)
    var sel = getSelection()
    sel.removeAllRanges()
    sel.addRange(range)
  }

  // Forms that must not be sent twice (mint, create, revoke, archive, cancel): the button is
  // disabled once sent. The server refuses a second charge or mint anyway.
  document.addEventListener("submit", function(event) {
    var form = event.target
    if (!form.hasAttribute("data-once")) return
    if (form.getAttribute("data-sent")) {
      event.preventDefault()
      return
    }
    form.setAttribute("data-sent", "1")
    setTimeout(function() {
      form.querySelectorAll("button[type=submit]").forEach(function(b) { b.disabled = true })
    }, 0)
  })

  // Links drawn as buttons (to a confirmation page) answer the Space key as a button does.
  document.addEventListener("keydown", function(event) {
    var link = event.target.closest && event.target.closest("a[role=button]")
    if (!link || (event.key !== " " && event.key !== "Spacebar")) return
    event.preventDefault()
    link.click()
  })

  // The New render form shows the chosen photo.
  var photoSelect = document.querySelector("select[data-preview]")
  if (photoSelect) {
    var thumbId = photoSelect.getAttribute("data-preview")
    var thumb = document.getElementById(thumbId)
    photoSelect.addEventListener("change", function() {
      // no photo was shown yet (the chosen one had left the library): the empty box becomes one
      var none = document.getElementById(thumbId + "-none")
      if (!thumb && none) {
        thumb = document.createElement("img")
        thumb.id = thumbId
        thumb.className = "thumb big"
        thumb.width = 96
        thumb.height = 96
        none.replaceWith(thumb)
      }
      if (!thumb) return
      var option = photoSelect.options[photoSelect.selectedIndex]
      thumb.src = "/portal/media/" + encodeURIComponent(photoSelect.value) + "/preview"
      thumb.alt = option ? option.getAttribute("data-label") || "Photo" : "Photo"
    })
  }

  // The page a sign-in link opens signs in at once: its form is sent from this site (a POST, which
  // is what signs in, so a link scanner that only fetches the link uses nothing up).
  var signIn = document.querySelector("form[data-submit-on-load]")
  if (signIn) addEventListener("load", function() { signIn.submit() })

  // The Library's selection (a plain GET form of checkboxes without script): "Select all on this
  // page" and a count of the photos ticked. Delegated, as the grid is replaced after an upload.
  function selectionOf(form) {
    var boxes = form.querySelectorAll("input[name=media_id]")
    var n = 0
    boxes.forEach(function(b) { if (b.checked) n++ })
    var all = form.querySelector("[data-select-all] input")
    if (all) {
      all.checked = n > 0 && n === boxes.length
      all.indeterminate = n > 0 && n < boxes.length
    }
    return n
  }
  function showSelection(form, message) {
    var n = selectionOf(form)
    var count = form.querySelector("[data-select-count]")
    if (count) count.textContent = message || (n === 0 ? "No photos selected" : n === 1 ? "1 photo selected" : n + " photos selected")
  }
  function initSelection() {
    document.querySelectorAll("form[data-select]").forEach(function(form) {
      form.querySelectorAll("[data-select-all], [data-select-count]").forEach(function(node) { node.hidden = false })
      showSelection(form)
    })
  }
  initSelection()
  // a page restored by Back keeps its ticks: count them again
  window.addEventListener("pageshow", initSelection)
  document.addEventListener("change", function(event) {
    var form = event.target.closest && event.target.closest("form[data-select]")
    if (!form) return
    if (event.target.closest("[data-select-all]")) {
      var on = event.target.checked
      form.querySelectorAll("input[name=media_id]").forEach(function(b) { b.checked = on })
    }
    showSelection(form)
  })
  document.addEventListener("submit", function(event) {
    var form = event.target
    if (!form.hasAttribute("data-select") || selectionOf(form) > 0) return
    event.preventDefault()
    showSelection(form, "Select one or more photos first.")
  })

  // A select that filters (renders by status) applies itself.
  document.querySelectorAll("select[data-autosubmit]").forEach(function(select) {
    select.addEventListener("change", function() { select.form.requestSubmit() })
  })

  // Live regions: every element with data-live is refreshed from the server's own page, every
  // two seconds, while the page says there is something running (data-live-active).
  function anyActive() {
    return document.querySelector("[data-live][data-live-active]") !== null
  }
  function refresh() {
    // a refresh that hangs is given up after 15 s, so the next one still comes (a stalled request
    // would otherwise end the page's live updates for good)
    var signal = typeof AbortSignal.timeout === "function" ? AbortSignal.timeout(15000) : undefined
    return fetch(location.href, { credentials: "same-origin", headers: { accept: "text/html" }, signal: signal })
      .then(function(response) {
        if (response.redirected && /\/portal\/signed-out$/.test(response.url)) {
          location.href = response.url
          return
        }
        if (!response.ok) return
        return response.text().then(function(text) {
          var fresh = new DOMParser().parseFromString(text, "text/html")
          document.querySelectorAll("[data-live]").forEach(function(node) {
            var next = fresh.getElementById(node.id)
            if (next && next.outerHTML !== node.outerHTML) node.replaceWith(document.importNode(next, true))
          })
          initSelection()
        })
      })
      .catch(function() {})
  }
  function poll() {
    setTimeout(function() {
      if (!anyActive()) return
      refresh().then(poll)
    }, 2000)
  }
  if (anyActive()) poll()

  // Uploads: one request per file, each with its own progress bar and outcome.
  var form = document.querySelector("form[data-upload]")
  if (form) {
    var input = form.querySelector("input[type=file]")
    var list = document.querySelector("[data-uploads]")
    var zone = form.querySelector("[data-dropzone]")
    var csrf = form.getAttribute("data-csrf")
    var isolated = function(text) {
      var bdi = document.createElement("bdi")
      bdi.textContent = text
      return bdi
    }
    var uploadOne = function(file, label) {
      return new Promise(function(resolve) {
        var item = document.createElement("li")
        // a file's name is the person's text: isolated, so its direction cannot reorder ours
        var name = isolated(file.name)
        var bar = document.createElement("progress")
        bar.max = 100
        bar.value = 0
        bar.setAttribute("aria-label", "Uploading " + file.name)
        var outcome = document.createElement("p")
        outcome.className = "outcome"
        item.append(name, bar, outcome)
        list.append(item)
        var data = new FormData()
        data.append("file", file, file.name)
        // no label typed: the file's name is the label (the API stores no file name of its own)
        data.append("label", label || Array.from(file.name).slice(0, 200).join(""))
        var xhr = new XMLHttpRequest()
        xhr.open("POST", form.action)
        xhr.setRequestHeader("X-CSRF-Token", csrf)
        xhr.upload.onprogress = function(e) {
          if (e.lengthComputable) bar.value = Math.round((e.loaded / e.total) * 100)
        }
        xhr.onload = function() {
          var ok = xhr.status === 201
          bar.value = ok ? 100 : bar.value
          if (!ok) bar.className = "failed"
          outcome.className = "outcome " + (ok ? "ok" : "bad")
          outcome.setAttribute("role", ok ? "status" : "alert")
          // the server's line for a success is "Uploaded NAME": said with the name isolated
          if (ok) outcome.replaceChildren("Uploaded ", isolated(file.name))
          else outcome.replaceChildren(isolated(file.name), ": " + problem(xhr))
          item.setAttribute("data-done", "1")
          resolve(ok)
        }
        xhr.onerror = function() {
          bar.className = "failed"
          outcome.className = "outcome bad"
          outcome.setAttribute("role", "alert")
          outcome.replaceChildren(isolated(file.name), ": the upload could not be sent; check the connection and try again")
          item.setAttribute("data-done", "1")
          resolve(false)
        }
        xhr.send(data)
      })
    }
    // the upload route answers its outcome as one line of text; anything else is a portal page
    var problem = function(xhr) {
      if (/\/portal\/signed-out$/.test(xhr.responseURL || "")) return "you are signed out; ask the operator for a new sign-in link"
      var type = xhr.getResponseHeader("content-type") || ""
      if (type.indexOf("text/plain") === 0 && xhr.responseText) return xhr.responseText
      if (xhr.status === 403) return "this page has expired; reload it and try again"
      if (xhr.status === 429) return "too many requests this minute; wait a little and try again"
      return "the upload failed (HTTP " + xhr.status + ")"
    }
    var uploadAll = function(files) {
      // a new batch: the finished outcomes of the last one (and any "choose first") give way to it;
      // uploads still running keep their rows
      list.querySelectorAll("li[data-done]").forEach(function(li) { li.remove() })
      if (!files || files.length === 0) {
        var none = document.createElement("li")
        none.setAttribute("data-done", "1")
        var p = document.createElement("p")
        p.className = "outcome bad"
        p.setAttribute("role", "alert")
        p.textContent = "Choose one or more photos first."
        none.append(p)
        list.append(none)
        return
      }
      var label = form.querySelector("[name=label]").value
      var chain = Promise.resolve()
      Array.prototype.forEach.call(files, function(file) {
        chain = chain.then(function() { return uploadOne(file, label) })
      })
      chain.then(function() {
        input.value = ""
        refresh()
      })
    }
    form.addEventListener("submit", function(event) {
      event.preventDefault()
      uploadAll(input.files)
    })
    ;["dragenter", "dragover"].forEach(function(type) {
      zone.addEventListener(type, function(e) {
        e.preventDefault()
        zone.classList.add("over")
      })
    })
    ;["dragleave", "drop"].forEach(function(type) {
      zone.addEventListener(type, function(e) {
        e.preventDefault()
        zone.classList.remove("over")
      })
    })
    zone.addEventListener("drop", function(e) {
      if (e.dataTransfer && e.dataTransfer.files) uploadAll(e.dataTransfer.files)
    })
  }
})()
