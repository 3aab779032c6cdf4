document.getElementById('app').textContent = 'osdkeeper dashboard (being written)';
