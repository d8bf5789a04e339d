// Loaded with ?delay=MS by agent/loading.html: the page's parser waits for it.
document.title = "Arrived";
