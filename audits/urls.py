"""Audit screens under /p/<slug>/audit/."""

from django.urls import path

from . import views

app_name = "audits"

urlpatterns = [
    path("p/<slug:slug>/audit/", views.audit_page, name="page"),
    path("p/<slug:slug>/audit/static.csv", views.audit_csv, name="csv"),
    path("p/<slug:slug>/audit/probes.csv", views.probes_csv, name="probes_csv"),
    path("p/<slug:slug>/audit/run/", views.audit_run, name="run"),
    path("p/<slug:slug>/audit/send/", views.audit_send, name="send"),
]
