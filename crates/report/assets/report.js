// tcpwhy report: reads the JSON in #tcpwhy-data and draws the page (issue 14).
"use strict";
